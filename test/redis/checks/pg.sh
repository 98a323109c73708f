# pg: later
