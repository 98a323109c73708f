# faults: later
