# contend: later
