"""The command line: the parser, one function per command, the words printed for people, and the
operations only the commands use."""
