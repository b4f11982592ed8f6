"""The accountant: a :class:`ParsedCall` (text) becomes a :class:`Call` (token numbers, each with its source).

Each distinct message is tokenized once per run (by content hash, and by reusing the previous call's counts for
an identical re-sent prefix), because every call re-sends the history.
"""

from __future__ import annotations

from typing import Any, Protocol

from ctxwatch.accounting.harness import harness_reserve, harness_window
from ctxwatch.catalog.documented import output_apart
from ctxwatch.catalog.windows import proves_long_context, resolve_window
from ctxwatch.config import DEFAULT_RESERVE, Settings
from ctxwatch.model import (
    Call,
    LastKey,
    MessageStat,
    ParsedCall,
    Src,
    digest,
    implausible_prompt,
    message_key,
    shared,
    text_key,
)
from ctxwatch.source import json_text
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for


def _tools_key(tools: list) -> int:
    """The content key (:func:`~ctxwatch.model.digest`) of a tool-schema payload, key order ignored."""
    return digest(json_text(tools, sort_keys=True))


def reserve_for(max_output_tokens: int | None, window: int | None, settings: Settings, *,
                output_apart: bool = False) -> tuple[int | None, Src]:
    """The reserve of a call in tokens and its source: one rule for reports, check, plan and the preview.

    ``output_apart``: the window is an input limit with the output's own room beside it (a documented window
    whose catalogue figure adds the output ceiling, :func:`ctxwatch.catalog.documented.output_apart`): no
    completion takes room from the prompt, so the reserve is 0 (labelled documented) unless the user set a
    reserve fraction.  Otherwise the request's own limit (``max_tokens`` / ``max_output_tokens``) when it sets
    one, capped at the window (a limit at or above the window leaves no room for any prompt: the whole window
    is reserved and the call is flagged); else ``settings.reserve`` (a fraction, field default 0.15) of the
    window; ``None`` when the window is unknown and the request sets no limit.
    """
    if output_apart and settings.reserve == DEFAULT_RESERVE:
        return 0, Src.DOCUMENTED
    if max_output_tokens:
        return (max_output_tokens if window is None else min(max_output_tokens, window)), Src.REQUEST
    if window is not None:
        return settings.reserve_tokens(window), (Src.DEFAULT if settings.reserve == DEFAULT_RESERVE else Src.OPTION)
    return None, Src.UNKNOWN


class CountStore(Protocol):
    """Token counts of messages kept between runs (:class:`ctxwatch.engine.counts.SavedCounts`): a count is
    ``(tokens, estimated)`` under the encoding's name, the provider and the message's content key."""

    def get(self, encoding: str, provider: str | None, key: int) -> tuple[int, bool] | None: ...

    def put(self, encoding: str, provider: str | None, key: int, tokens: int, cut: bool) -> None: ...


class Accountant:
    """Accounts calls with a shared message cache (one per run).

    Per call (:meth:`account`):

    * ``system_tokens`` and ``tools_tokens`` (the **floor**, re-sent on every call and untouched by compaction);
    * ``history_tokens``: every non-system message, tool-call names and arguments and tool results included,
      with the per-message framing overhead;
    * ``reserve_tokens``: the request's max output tokens if given, else ``reserve`` x window (:func:`reserve_for`);
    * ``free_tokens`` = window - floor - history - reserve (negative = overflow), see :class:`Call`.

    Where a format does not log the system prompt and tool schemas (Claude Code, Codex), the floor is
    **inferred** as the reported prompt tokens minus the estimated visible history, and labelled so; where the
    reader says the visible history is cut (:attr:`~ctxwatch.model.Provenance.history_cut`: a Claude Code excerpt
    whose chain runs out
    of the file), floor and history are unknown and only the reported total is shown.  A call that comes without
    its history (``messages is None`` with ``history_reported_only``: the Claude Code reader sends the history
    of
    one call per context) takes the floor inferred from the call named in its
    :attr:`~ctxwatch.model.Provenance.floor_call`, and its
    history is the reported prompt minus that floor (both labelled inferred): nothing is tokenized for it.
    (:meth:`ctxwatch.engine.run.Run` accounts calls that carry a history first.)  A Codex call names its
    episode's first call the same way, but carries its messages, which are still counted for the detail view;
    its history is the reported prompt minus that floor all the same.

    Args:
        settings: thresholds and the window override.

    The cache maps ``(encoding, message content hash)`` to tokens; it holds integers only, never text.

    Attributes:
        saved: counts kept between runs, asked before a message is tokenized and given each new count (set by
            the engine when it reads through its cache; not pickled with the run).
    """

    saved: CountStore | None = None

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # (encoding, provider, content hash) -> shared immutable MessageStat: a re-sent message costs one
        # dict lookup and one reference per call, and its text is tokenized once per run.
        self._msg_cache: dict[tuple[str, str | None, int], MessageStat] = {}
        self._counters: dict[tuple[str | None, str | None], Counter] = {}
        # call key -> the floor inferred from that call (reported prompt minus estimated history)
        self._floors: dict[str, int] = {}
        # (session, context, model) -> the first call whose reported prompt went past 200k: from that call on,
        # the 1M-token beta window applies
        self._long_context: dict[tuple[str | None, str, str | None], int] = {}
        # What prefetch sent last: the messages and the tool schemas (their texts are not sent again).
        self._sent_messages: list = []
        self._sent_tools: object = None
        # The previous call's messages, stats, history tokens, counter and inexact count (prefix reuse).
        self._prev: tuple[list, list[MessageStat], int, Counter | None, int] = ([], [], 0, None, 0)
        self._tools_key = LastKey(_tools_key)  # (a re-sending log's unchanged schemas keyed once)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("saved", "_sent_messages", "_sent_tools"):
            state.pop(name, None)  # (a database handle of the process that saved the run; what was prefetched)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sent_messages, self._sent_tools = [], None

    def prefetch(self, pc: ParsedCall) -> None:
        """Send the texts :meth:`account` will tokenize for ``pc`` to the counting child of its tokenizer
        (:meth:`~ctxwatch.tokens.Tokenizer.prefetch`), as soon as the call is parsed: counted there while the
        run reads on (nothing when there is no child)."""
        counter = self.counter(pc.model, pc.provider)
        if counter.tokenizer.server is None:
            return
        texts: list[str] = []
        msgs = pc.messages
        if msgs is not None:
            sent = self._sent_messages
            k = 0
            limit = min(len(sent), len(msgs))
            if limit and msgs[:limit] == sent[:limit]:
                k = limit
            name, prov, cache = counter.name, counter.provider, self._msg_cache
            for msg in msgs[k:]:
                if (name, prov, message_key(msg)) not in cache:
                    texts += counter.message_texts(msg)
            self._sent_messages = msgs
        if pc.system:
            texts += ["system", *pc.system]
        if pc.tools and pc.tools is not self._sent_tools:
            self._sent_tools = pc.tools
            texts += [json_text(t) for t in pc.tools]
        counter.tokenizer.prefetch(texts)

    def counts_pending(self) -> bool:
        """True while a counting child of this run's tokenizers is still loading its encoding: accounting now
        would wait for it (the run holds its parsed calls a little longer, see :meth:`Run._take`)."""
        return any(c.tokenizer.server is not None and not c.tokenizer.server.ready() for c in self._counters.values())

    def counter(self, model: str | None, provider: str | None) -> Counter:
        """The token counter for a model/provider pair (cached)."""
        k = (model, provider)
        c = self._counters.get(k)
        if c is None:
            c = self._counters[k] = counter_for(model, provider)
        return c

    def note_window_evidence(self, pc: ParsedCall, index: int) -> None:
        """Learn from call ``index`` what its context's window is: a prompt past 200k tokens of a Claude model
        that offers the 1M-token beta (:func:`ctxwatch.catalog.windows.proves_long_context`) means that beta, for
        this
        call and the later calls of its (session, context, model).
        The run calls it for its pending calls in call order before accounting them (:meth:`account` also
        calls it), since calls may be accounted out of order (a compaction's first call before a lazy one)."""
        reported = pc.usage.prompt_total if pc.usage else None
        if proves_long_context(reported, pc.model, pc.provider):
            key = (pc.session, pc.context, pc.model)
            self._long_context[key] = min(index, self._long_context.get(key, index))

    def account(self, pc: ParsedCall, index: int) -> Call:
        """Compute the :class:`Call` summary of one parsed call.

        Args:
            pc: the parsed call (its text is not kept).
            index: the call's 0-based position in its run.

        Returns:
            The accounted call. Never raises for odd content: unknown parts count as their text.
        """
        st = self.settings
        counter = self.counter(pc.model, pc.provider)
        reported = pc.usage.prompt_total if pc.usage else None
        self.note_window_evidence(pc, index)
        since = self._long_context.get((pc.session, pc.context, pc.model))
        long_context = since is not None and index >= since
        window, window_src = resolve_window(pc.model, pc.provider, pc.window, st.window, long_context=long_context)
        if st.stated_window and st.stated_window != window and not pc.window and window_src != Src.OPTION \
                and pc.context == "main":
            # (the harness's own word on the window it runs the session in: its rules apply, at that window; the
            # window the call has anyway keeps its source)
            window, window_src = st.stated_window, Src.HARNESS
        # A window the user set (--window, config) is a what-if or a deployment limit: a reported prompt above it
        # is an overflow, so plausibility is judged against the window the log or the catalogue gives.
        model_window = window if window_src != Src.OPTION else resolve_window(
            pc.model, pc.provider, pc.window, None, long_context=long_context)[0]
        if window_src not in (Src.LOG, Src.OPTION, Src.HARNESS) \
                and (hw := harness_window(pc.provenance.harness, window)):
            # (the harness works in a share of the model's window; a prompt is still judged against the model's)
            window, window_src = hw, Src.HARNESS

        stats: list[MessageStat] = []
        history: int | None = None
        if pc.messages is not None:
            history = 0
            cache = self._msg_cache
            name, prov = counter.name, counter.provider
            msgs = pc.messages
            # Reuse the previous call's stats for the identical re-sent prefix (same Message objects).
            prev_msgs, prev_stats, prev_history, prev_counter, prev_inexact = self._prev
            k = 0
            if prev_counter is counter:
                limit = min(len(prev_msgs), len(msgs))
                if msgs[:limit] == prev_msgs[:limit]:  # (one C-level pass, by identity first: the usual re-send)
                    k = limit
                while k < limit and msgs[k] is prev_msgs[k]:
                    k += 1
            # count of messages with an image estimate or a cut text (either makes the count inexact)
            inexact = 0
            if k:
                stats = prev_stats[:k]
                if k == len(prev_stats):
                    history, inexact = prev_history, prev_inexact
                else:  # (a part of the previous history: summed again, rare, instead of a sum kept per message)
                    history = sum(s.tokens for s in stats)
                    inexact = sum(s.has_image or s.text_cut for s in stats)
                msgs = msgs[k:]
            for msg in msgs:
                key = message_key(msg)
                ck = (name, prov, key)
                stat = cache.get(ck)
                if stat is None:
                    saved = self.saved
                    kept = saved.get(name, prov, key) if saved is not None else None
                    if kept is not None:
                        tokens, cut = kept
                    else:
                        tokens, cut = counter.message_count(msg)
                        if saved is not None:
                            saved.put(name, prov, key, tokens, cut)
                    stat = cache[ck] = MessageStat(
                        role=msg.role, tokens=tokens, content_key=key,
                        tool_call_ids=tuple(msg.tool_call_ids()), tool_result_ids=tuple(msg.tool_result_ids()),
                        label=msg.label, has_image=any(p.kind in ("image", "document") for p in msg.parts),
                        text_cut=cut,
                    )
                history += stat.tokens
                inexact += stat.has_image or stat.text_cut
                stats.append(stat)
            self._prev = (pc.messages, stats, history, counter, inexact)
            history_inexact = inexact > 0
        else:
            history_inexact = False

        system_tokens, system_cut = counter.system_count(pc.system) if pc.system is not None else (None, False)
        tools_tokens, tools_cut = counter.tools_count(pc.tools) if pc.tools is not None else (None, False)
        floor: int | None
        prompt_est: int | None = None
        history_src = Src.ESTIMATED if history is not None else Src.UNKNOWN
        if system_tokens is not None and tools_tokens is not None and not pc.history_reported_only:
            floor, floor_src = system_tokens + tools_tokens, Src.ESTIMATED
            if history is not None:
                prompt_est = floor + history + REPLY_PRIMER
        elif pc.history_reported_only and pc.provenance.history_cut:
            # Only the visible tail of the history is in the log: any split of the reported prompt would
            # put the missing history into the floor. Only the total is known.
            floor, floor_src = None, Src.UNKNOWN
            history, history_src = None, Src.UNKNOWN
        elif reported is not None and pc.history_reported_only and implausible_prompt(reported, model_window):
            # A reported prompt larger than the window (or of 0) is implausible, no occupancy: no split of
            # it is shown, and a floor taken from it would be the whole prompt for every later call of its
            # context (or, from a 0, a floor and history of 0 that would pass for a measured empty prompt).
            floor, floor_src = None, Src.UNKNOWN
            history, history_src = None, Src.UNKNOWN
        elif reported is not None and pc.history_reported_only \
                and (known := self._floors.get(pc.provenance.floor_call or "")) is not None \
                and (known > 0 or pc.messages is None):
            # The context's floor is known from an earlier call: the rest of the reported prompt is history
            # (the messages, when logged, are still counted one by one for the detail view).
            floor, floor_src = min(known, reported), Src.INFERRED
            history, history_src = reported - floor, Src.INFERRED
        elif reported is not None and history is not None:
            # The floor is not logged: attribute the residual of the reported prompt to it.
            floor, floor_src = max(0, reported - history), Src.INFERRED
            if pc.history_reported_only:
                if pc.key:
                    self._floors[pc.key] = floor
                fc = pc.provenance.floor_call
                if fc and self._floors.get(fc) == 0 and floor > 0:
                    # The first call's reported prompt was below its counted history (a floor of 0 says nothing
                    # about the system prompt and tools): the first call that leaves a floor gives it instead.
                    self._floors[fc] = floor
        else:
            floor, floor_src = None, Src.UNKNOWN

        reserve, reserve_src = harness_reserve(pc.provenance.harness, window, st, window_src) or reserve_for(
            pc.max_output_tokens, window, st,
            output_apart=window_src == Src.DOCUMENTED and output_apart(pc.model, pc.provider))

        system_present: bool | None = None if pc.system is None else bool(pc.system and any(pc.system))
        tool_names: tuple[str, ...] = ()
        if pc.tools:
            names = []
            for t in pc.tools:
                f = t.get("function")
                fn = f if isinstance(f, dict) else t
                names.append(str(fn.get("name") or "?"))
            tool_names = tuple(names)

        return Call(
            index=index, source=pc.source, timestamp=pc.timestamp, model=shared(pc.model), provider=pc.provider,
            session=shared(pc.session), context=pc.context, window=window, window_src=window_src,
            system_tokens=system_tokens, tools_tokens=tools_tokens, floor_tokens=floor, floor_src=floor_src,
            history_tokens=history, history_src=history_src,
            reserve_tokens=reserve, reserve_src=reserve_src, prompt_estimated=prompt_est, usage=pc.usage,
            tokenizer=counter.name, exact=counter.exact and not (history_inexact or system_cut or tools_cut),
            messages=tuple(stats),
            system_key=text_key(pc.system) if pc.system else None, system_present=system_present,
            tools_key=self._tools_key(pc.tools) if pc.tools else None, tool_names=tool_names,
            compaction=pc.compaction, response=pc.response, key=pc.key,
            max_output_tokens=pc.max_output_tokens, provenance=pc.provenance.copy(), model_window=model_window,
        )
