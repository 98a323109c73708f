# badinput: later
