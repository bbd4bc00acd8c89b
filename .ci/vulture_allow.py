"""Names vulture sees as unused that something outside the package's own calls uses: a framework
that calls them by name, a signature it requires, or the tests and benchmarks. Each with why.
Read by .ci/lint (vulture sentinel_memory server.py .ci/vulture_allow.py)."""

# noqa: F821 (vulture reads the names; nothing runs this file)
# fmt: off
frame  # __main__.stop: the signal handler's signature (signum, frame)
on_call_tool  # server.PlainArgumentErrors: FastMCP's middleware hook, called by name
collection  # server's state store: the key-value protocol FastMCP calls (get, put, delete)
ttl  # the same protocol's put(key, value, collection, ttl)
delete  # the same protocol
_state_store  # the FastMCP attribute the server sets its store through
search_memory  # server: the tools FastMCP registers by decorator
log_memory
compact_memory
COMMANDS  # cli.commands: the commands' table the tests walk
principles_first  # search.ranked: the property tests compare rankings by it
TOOLS  # tools.parameters: the tools' parameters by tool, which test_docs checks the schema against
__getattr__  # tools/__init__: the module's attributes loaded on first use (PEP 562), called by Python
strong_matches  # tools.memory: search's strong matches over a path, which the tests hold the hooks' choice to
