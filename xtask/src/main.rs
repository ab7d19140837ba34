//! kshim's automation, one binary whose first argument is the command.

fn main() {}
