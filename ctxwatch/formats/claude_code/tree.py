"""The ``parentUuid`` tree of a Claude Code transcript, and the visible history of a call walked from it.

Every line of a transcript (but bookkeeping) has a ``uuid`` and the ``parentUuid`` of the line before it in its
conversation; a call's visible history is the chain from its first line's parent back to the root or to the
last ``compact_boundary`` (whose ``parentUuid`` is null).  Parallel tool calls fork the tree, subagents run in
contexts of their own, and a resumed session copies lines again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxwatch.formats.claude_code.calls import CallState
from ctxwatch.model import Message
from ctxwatch.model.pickling import fast_pickle


@fast_pickle  # (a live log's saved reader state holds its tree)
@dataclass(slots=True)
class Node:
    """One record of the ``parentUuid`` tree.

    ``kind``: ``user`` (a message sent to the model), ``assistant`` (a line of call ``call_key``),
    ``boundary`` (``compact_boundary``: history stops here) or ``other`` (progress, system, attachment...:
    passed through when following a chain).
    """

    uuid: str
    parent: str | None
    context: str
    root: str
    kind: str
    message: Message | None = None
    call_key: str | None = None


@fast_pickle
@dataclass(slots=True)
class Chain:
    """The last history built in one context, extended when the next call's chain passes through its leaf."""

    leaf: str | None = None
    messages: list[Message] = field(default_factory=list)
    calls_done: set[str] = field(default_factory=set)
    nodes_done: set[str] = field(default_factory=set)
    complete: bool = False  # the walk reached the root or a compact_boundary (not a record missing from the file)


class ParentTree:
    """The ``parentUuid`` tree of one transcript file: its nodes, the tool results answering each tool call,
    and the last history built in each context (extended by the next call's walk).

    Args:
        file_context: the context of every line of a subagent transcript (``agent-<id>``), else ``None``.
    """

    def __init__(self, file_context: str | None) -> None:
        self.file_context = file_context
        self.nodes: dict[str, Node] = {}
        self.results: dict[str, list[Node]] = {}  # tool_use_id -> user nodes answering it, in file order
        self._chains: dict[str, Chain] = {}
        self._last_node: dict[bool, str] = {}  # is-sidechain -> uuid of the latest node (lines w/o parentUuid)

    def context_of(self, uid: str, parent: str | None, side: bool, agent: str | None) -> tuple[str, str]:
        """``(context, root)`` of a record: ``main``, ``agent-<id>`` (file name, else ``agentId``) or, for v1.0.x
        inline sidechains, ``sidechain-<first 8 characters of the chain's root uuid>``.  The root is the first
        record of the chain within the same context, so a sidechain whose first record points into the main
        chain still gets its own id."""
        pnode = self.nodes.get(parent) if parent else None
        if self.file_context:
            ctx = self.file_context
        elif not side:
            ctx = "main"
        elif agent:
            ctx = f"agent-{agent}"
        elif pnode is not None and pnode.context.startswith("sidechain-"):
            ctx = pnode.context
        else:
            ctx = f"sidechain-{uid[:8]}"
        root = pnode.root if pnode is not None and pnode.context == ctx else uid
        return ctx, root

    def add(self, uid: str, parent: str | None, has_parent_key: bool, side: bool, agent: str | None,
            kind: str) -> Node:
        """Add the record ``uid`` (its ``parentUuid``: ``parent``, or when the record has no such key at all
        (``has_parent_key`` False) the latest record of its side; ``side``: ``isSidechain``; ``agent``:
        ``agentId``) as a node of ``kind``, and return it."""
        if not has_parent_key:
            parent = self._last_node.get(side)
        ctx, root = self.context_of(uid, parent, side, agent)
        node = Node(uid, parent, ctx, root, kind)
        self.nodes[uid] = node
        self._last_node[side] = uid
        return node

    def history(self, context: str, parent: str | None, calls: dict[str, CallState], *, remember: bool = True
                ) -> tuple[list[Message], bool]:
        """The visible history of a call whose first line's parent is ``parent``.

        Follows ``parentUuid`` from ``parent`` towards the root, stopping at a ``compact_boundary``, at a record
        not in this file (excerpts, the summarizer's links into the main session) or at another context.  Each
        response on the chain is one assistant message holding *all* its lines (parallel tool calls fork the
        tree: Claude Code chains later lines through one branch only), followed by every tool result answering
        its tool calls, also those on sibling branches (the API requires a result for every ``tool_use``).
        The walk stops early where the previous call's chain ended and reuses its messages, so a linear session
        costs time proportional to its new records only (plus one list copy per call).  ``calls``: the file's
        calls by key (their responses are on the chain).  ``remember=False`` rebuilds without touching that
        cache (a late line of an older call).

        Returns ``(messages, complete)``: ``complete`` is False when the walk stopped at a record missing from
        the file (an excerpt, a cycle), so the history is only its visible tail.
        """
        cache = self._chains.get(context) if remember else None
        path: list[Node] = []
        u = parent
        hit = False
        complete = False
        limit = len(self.nodes) + 1
        while limit > 0:
            limit -= 1
            if u is None:
                complete = True
                break
            if cache is not None and u == cache.leaf:
                hit = True
                break
            node = self.nodes.get(u)
            if node is None or node.context != context:
                # A sidechain's first record points into the main chain: its own history starts there.
                complete = node is not None
                break
            path.append(node)
            if node.kind == "boundary":
                complete = True
                break
            u = node.parent
        if hit and cache is not None:
            chain = cache
            complete = cache.complete
            messages = list(cache.messages)
        else:
            chain = Chain(complete=complete)
            messages = []
        for node in reversed(path):
            if node.kind == "user" and node.message is not None:
                if node.uuid not in chain.nodes_done:
                    chain.nodes_done.add(node.uuid)
                    messages.append(node.message)
            elif node.kind == "assistant" and node.call_key is not None:
                if node.call_key in chain.calls_done:
                    continue
                chain.calls_done.add(node.call_key)
                call = calls.get(node.call_key)
                if call is None:
                    continue
                messages.append(call.message())
                for tid in call.tool_use_ids():
                    for rnode in self.results.get(tid, ()):
                        if rnode.context == context and rnode.uuid not in chain.nodes_done \
                                and rnode.message is not None:
                            chain.nodes_done.add(rnode.uuid)
                            messages.append(rnode.message)
        if remember:
            chain.leaf = parent
            chain.messages = messages
            self._chains[context] = chain
        return messages, complete
