"""The fast start: the handshake answered while fastmcp loads (`proxy`), from fastmcp's own answers
kept in the user's cache (`cache`), recorded by `recorder`. Standard library only."""
