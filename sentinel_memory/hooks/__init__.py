"""The client hooks: `sentinel-memory hook --client <name>` reads one event a coding client sends
(a prompt, a file about to be written, the agent stopping) and answers in that client's shape
(docs/clients.md, docs/contract.md §7.1). run.py is the command; the rest is what it is made of."""
