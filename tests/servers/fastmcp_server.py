"""A server written with FastMCP (PyPI ``fastmcp``, pinned in pyproject), for interop tests:
mcpkit's client and host talk to it over stdio."""

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-peer")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
async def count(ctx: Context, to: int = 3) -> str:
    """Report progress up to ``to``, then finish."""
    for step in range(1, to + 1):
        await ctx.report_progress(step, to)
    return f"counted to {to}"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


@mcp.prompt
def review(topic: str) -> str:
    """Ask for a review of a topic."""
    return f"Please review {topic}."


if __name__ == "__main__":
    mcp.run(show_banner=False)
