"""Re-injection: what is worth sending again after a compaction (the task, the plan, the task list, the file being
edited), found heuristically in the messages.

An agent run usually has one user message, the prompt that started it: re-injected, it lets a cut fall inside
that turn and still send a history that starts with a user message.  Items are counted as the plain user
messages :class:`ctxwatch.budget.ContextBudget` sends, headers included.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ctxwatch.model import Message, MessageStat
from ctxwatch.tokens import Counter

#: User-message labels that are not the user's task (a previous compaction summary, a harness meta note).
NOT_TASK_LABELS = frozenset({"compaction_summary", "meta"})

#: Headers the reinjected items are sent under (by :class:`ctxwatch.budget.ContextBudget`, and counted
#: with these exact texts by the planner so that plan and result agree).
REINJECT_HEADERS: dict[str, str] = {
    "task": "Original task (the first user message):\n",
    "plan": "Current plan:\n",
    "tasks": "Current task list:\n",
    "file": "File being edited: ",
}
#: Header of the summary message :class:`ctxwatch.budget.ContextBudget` inserts for the summarised span.
SUMMARY_HEADER = "Summary of the earlier conversation (older turns were compacted):\n"

# Tool names (lower-cased, "_"/"-"/" " removed) recognised by the reinjection heuristics.
#: Task-list tools: Claude Code ``TodoWrite``, Codex ``update_plan``, Gemini CLI ``write_todos`` and kin.
TASK_LIST_TOOLS = frozenset({"todowrite", "writetodos", "updatetodos", "todoupdate", "updateplan", "tasklist",
                             "updatetasklist", "settodos", "todo"})
#: Plan tools: Claude Code ``ExitPlanMode`` (argument ``plan``) and similarly named tools.
PLAN_TOOLS = frozenset({"exitplanmode", "createplan", "writeplan", "setplan", "submitplan", "plan"})
#: File-editing tools whose path argument names "the file being edited".
EDIT_TOOLS = frozenset({"edit", "multiedit", "write", "notebookedit", "strreplacebasededittool", "strreplaceeditor",
                        "strreplace", "writefile", "editfile", "createfile", "replace", "applypatch",
                        "writetofile", "replaceinfile", "insertcontent", "searchreplace"})
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file", "file", "absolute_path")
_PATCH_FILE = re.compile(r"\*\*\* (?:Update|Add) File: ([^\n\"\\]+)")
#: A plan file: a Markdown file whose name holds "plan", or any Markdown file in a ``plans`` folder (Claude
#: Code's plan mode writes the plan to ``~/.claude/plans/<random-name>.md``, then calls ``ExitPlanMode`` with no
#: input).
_PLAN_FILE = re.compile(r"(?:(?:^|[/\\])plans[/\\][^/\\]+|plan[^/\\]*)\.md$", re.I)
_PLAN_LINE = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?plan(?:\*\*)?\s*:?\s*(?:\*\*)?\s*$", re.I | re.M)


@dataclass(slots=True)
class ReinjectItem:
    """Something worth re-injecting after compaction, found heuristically in the messages.

    Attributes:
        kind: ``task`` (the first user message) | ``plan`` | ``tasks`` (the task list) | ``file`` (the path
            of the file being edited).
        text: the text that would be re-injected, header (:data:`REINJECT_HEADERS`) included.
        tokens: its tokens as one user message (framing included).
        index: the plan index of the message it was found in.
        detail: one human sentence saying what was found where.
        reinjected: True when the plan re-injects it (its source is evicted and the policy asks for it).
    """

    kind: str
    text: str
    tokens: int
    index: int
    detail: str
    reinjected: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "tokens", "index", "detail"}`` (the text itself is left out: it can be long)."""
        return {"kind": self.kind, "tokens": self.tokens, "index": self.index, "detail": self.detail}


def text_message_tokens(counter: Counter, text: str) -> int:
    """Tokens of a plain-text user message holding ``text``, the counter's per-message framing included."""
    return counter.per_message + counter.tokenizer.count(text)


def _norm_tool(name: str | None) -> str:
    return re.sub(r"[\s_\-]", "", (name or "").lower()).removeprefix("functions.")


def _args(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _render_todos(args: Any, raw: str) -> tuple[str, int]:
    """A task list as text lines ``- [status] item``, and its item count; the raw arguments if unknown."""
    if isinstance(args, dict):
        for key, text_key in (("todos", "content"), ("plan", "step"), ("tasks", "content"), ("items", "content")):
            items = args.get(key)
            if isinstance(items, list) and items:
                lines = []
                for it in items:
                    if isinstance(it, dict):
                        txt = it.get(text_key) or it.get("content") or it.get("step") or it.get("description") or ""
                        lines.append(f"- [{it.get('status', '')}] {txt}")
                    else:
                        lines.append(f"- {it}")
                head = f"{args['explanation']}\n" if isinstance(args.get("explanation"), str) else ""
                return head + "\n".join(lines), len(items)
    return raw, 0


def _edited_path(name: str, args: Any, raw: str) -> str | None:
    """The path a tool call edits, or ``None``. ``apply_patch`` bodies are read for ``*** Update File:``."""
    m = _PATCH_FILE.search(raw)
    if m:
        return m.group(1).strip()
    if _norm_tool(name) not in EDIT_TOOLS or not isinstance(args, dict):
        return None
    if args.get("command") == "view":  # str_replace_based_edit_tool's read-only command
        return None
    for key in _PATH_KEYS:
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key])
    return None


def find_reinject(messages: Sequence[Message | MessageStat], counter: Counter,
                  indexes: Sequence[int] | None = None, numbers: Sequence[int] | None = None) -> list[ReinjectItem]:
    """Detect what is worth re-injecting after a compaction, heuristically.

    Args:
        messages: the history (MessageStat entries carry no text and are skipped).
        counter: counts the rendered items (one plain user message each, :func:`text_message_tokens`).
        indexes: the plan index of each message (default: its position).
        numbers: the ``#`` people see for each, which the details name (default: its position + 1, the history
            numbered from 1 as :attr:`~ctxwatch.planner.MessagePlan.number` numbers it).

    Returns:
        At most one item of each kind, in the order task, plan, tasks, file:

        * ``task``: the first user message that is not a tool result, a compaction summary or a meta note;
        * ``tasks``: the latest task-list tool call (:data:`TASK_LIST_TOOLS`, e.g. ``TodoWrite``,
          ``update_plan``), rendered as ``- [status] item`` lines;
        * ``plan``: the latest plan tool call (:data:`PLAN_TOOLS`, e.g. ``ExitPlanMode``'s ``plan``; one with
          empty input is passed over) or whole write of a plan file (:data:`_PLAN_FILE`: Claude Code's plan
          mode; an edit of a plan file is neither the plan nor the file being edited), else
          the latest assistant text with a line that is just "Plan:" / "## Plan" (from that line on);
        * ``file``: the path in the latest edit/write tool call (:data:`EDIT_TOOLS`) or ``apply_patch``.

        Messages an earlier compaction inserted (:class:`ctxwatch.budget.ContextBudget` in a loop compacts
        again and again) are recognised by their headers: the summary (:data:`SUMMARY_HEADER`) is never
        the task, and a re-injected item (:data:`REINJECT_HEADERS`) is a candidate of its kind with its
        body, so the original task, plan, task list and file survive the next compaction unchanged instead
        of being nested under another header.  Later tool calls or plan texts supersede them.
    """
    idx = list(indexes) if indexes is not None else list(range(len(messages)))
    num = list(numbers) if numbers is not None else [j + 1 for j in range(len(messages))]

    def item(kind: str, body: str, j: int, detail: str) -> ReinjectItem:
        text = REINJECT_HEADERS[kind] + body
        return ReinjectItem(kind, text, text_message_tokens(counter, text), idx[j], detail)

    task = plan = tasks = efile = None
    plan_tool = False  # the plan came from a plan tool call: later assistant plan texts do not replace it
    for j, m in enumerate(messages):
        if not isinstance(m, Message):
            continue
        if m.role == "user" and not m.tool_result_ids() and m.label not in NOT_TASK_LABELS:
            body = "\n".join(p.text for p in m.parts if p.kind == "text" and p.text)
            kind = next((k for k, h in REINJECT_HEADERS.items() if body.startswith(h)), None)
            if kind is not None:  # re-injected by an earlier compaction
                rest = body[len(REINJECT_HEADERS[kind]):]
                where = f"re-injected {kind} in message {num[j]}"
                if kind == "task":
                    task = task or item("task", rest, j, where)
                elif kind == "plan":
                    plan, plan_tool = item("plan", rest, j, where), False
                elif kind == "tasks":
                    tasks = item("tasks", rest, j, where)
                else:
                    efile = item("file", rest, j, where + f": {rest}")
                continue
            if task is None and body.strip() and not body.startswith(SUMMARY_HEADER):
                preview = " ".join(body.split())[:60]
                task = item("task", body, j, f"first user message (message {num[j]}): \"{preview}\"")
        for p in m.parts:
            if p.kind != "tool_call":
                continue
            n = _norm_tool(p.name)
            a = _args(p.text)
            if n in TASK_LIST_TOOLS:
                body, count = _render_todos(a, p.text)
                tasks = item("tasks", body, j, f"{p.name} call in message {num[j]}"
                             + (f" ({count} items)" if count else ""))
            elif n in PLAN_TOOLS:
                given = a.get("plan") if isinstance(a, dict) else None
                body = given if isinstance(given, str) else p.text if a != {} else ""
                if body.strip():  # (an ExitPlanMode with no input, its plan in a file, leaves the plan found)
                    plan, plan_tool = item("plan", body, j, f"{p.name} call in message {num[j]}"), True
            path = _edited_path(p.name or "", a, p.text)
            if path and n in EDIT_TOOLS and _PLAN_FILE.search(path):
                # The plan, not the work: a whole write is re-injected as the plan; an edit of it (a diff, not
                # the plan) leaves the plan found; neither is "the file being edited".
                written = a.get("content") if isinstance(a, dict) else None
                if isinstance(written, str) and written.strip():
                    plan, plan_tool = item("plan", written, j, f"{p.name} call in message {num[j]} writes {path}"), True
            elif path:
                efile = item("file", path, j, f"{p.name} call in message {num[j]} edits {path}")
        if m.role == "assistant" and not plan_tool:
            txt = "\n".join(p.text for p in m.parts if p.kind == "text")
            mm = _PLAN_LINE.search(txt)
            if mm:
                plan = item("plan", txt[mm.start():].strip(), j, f"assistant plan text in message {num[j]}")
    return [x for x in (task, plan, tasks, efile) if x is not None]
