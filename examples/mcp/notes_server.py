"""A small MCP server to try `toolstand contract import --mcp` on (stdio).

    python examples/mcp/notes_server.py

Three tools: a read-only search, an additive note and a destructive delete. Change a
parameter here (say, max_length of ``text``) to watch `toolstand check --against-mcp`
catch the drift. Needs the SDK: pip install 'toolstand[mcp]'.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

notes = MCPServer("notes", version="1.0.0")
NoteId = Annotated[str, Field(pattern=r"^N-[0-9]{4}$", description="a note id, e.g. N-0042")]


@notes.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_notes(query: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
    """Find notes whose text contains the query."""
    return {"notes": []}


@notes.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def add_note(text: Annotated[str, Field(max_length=280)]) -> dict[str, Any]:
    """Write a new note."""
    return {"id": "N-0001"}


@notes.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_note(note_id: NoteId) -> dict[str, Any]:
    """Delete a note for good."""
    return {"deleted": note_id}


if __name__ == "__main__":
    notes.run()
