# sqlite: later
