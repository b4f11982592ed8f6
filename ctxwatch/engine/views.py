"""What a run's calls say as a whole: calibrations, the current occupancy, the contexts.

A mixin of :class:`~ctxwatch.engine.run.Run`, kept apart from the feeding: it reads only :attr:`calls` and
:meth:`pending_compactions`.
"""

from __future__ import annotations

from ctxwatch.accounting import Calibrations, calibrations_of
from ctxwatch.formats import FormatSpec
from ctxwatch.model import Call, Issue, shown_used


class RunViews:
    """Views over ``self.calls`` (accounted calls in order) and ``self.pending_compactions()``."""

    spec: FormatSpec  # (the run's own attributes)
    formats: list[str]
    issues: list[Issue]

    @property
    def calls(self) -> list[Call]:  # (the run's own property)
        raise NotImplementedError

    def pending_compactions(self) -> dict[str, dict[str, object]]:  # (the run's own method)
        raise NotImplementedError

    def format_read(self) -> tuple[str | None, list[str]]:
        """The format the run's calls were read in and every format its files were read with; ``(None, [])``
        when it read no call and its files were empty: an empty log is in no format yet."""
        if not self.calls and any(i.kind == "empty_file" for i in self.issues):
            return None, []
        return self.spec.name, list(self.formats)

    def calibration(self) -> float | None:
        """The run's median of reported / estimated prompt tokens over calls that have both, or ``None`` with
        fewer than :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` of them: the factor of a model none of
        whose calls has both (:meth:`factors`).  Implausible reports and quota probes are left out."""
        return calibrations_of(self.calls).run

    def calibrations(self) -> dict[str | None, float | None]:
        """Per model, the median reported / estimated prompt ratio (the tokenizer gap is a property of the model
        family, so a large model and its helper model get one factor each); ``None`` for a model with too few
        calls that have both (not calibrated, rather than given the run's factor)."""
        return dict(calibrations_of(self.calls).per_model)

    def factors(self) -> Calibrations:
        """The run's calibrations as every surface applies them to a call's floor and history
        (:meth:`~ctxwatch.accounting.Calibrations.breakdown`).  Reads every call once: O(calls)."""
        return calibrations_of(self.calls)

    def occupancy(self, context: str = "main", calibrations: Calibrations | None = None) -> tuple[int | None, str]:
        """The context's current prompt size in tokens and where the number comes from.

        Right after a compaction whose next call has not arrived: the log's ``post_tokens`` (``"log"``), else
        ``None`` with ``"compacted"`` (never the stale size from before the compaction, and never 0).  Otherwise
        the latest call's prompt (``"reported"``, or ``"estimated"``: as every surface shows it,
        :func:`~ctxwatch.model.shown_used`), passing over calls whose reported prompt is
        implausible or that have no size at all (a damaged usage and no messages to count): the last known
        occupancy stays.  ``calibrations``: the run's :meth:`factors`, when the caller has them (else worked out
        here, for an estimated size).
        """
        pending = self.pending_compactions()
        marker = pending.get(context)
        if marker is None and context == "main" and pending.get("") is not None:
            marker = pending[""]
        if marker is not None:
            post = marker.get("post_tokens")
            return (int(post), "log") if isinstance(post, int) and post > 0 else (None, "compacted")
        for c in reversed(self.calls):
            if c.context == context and not c.prompt_implausible and c.prompt_tokens is not None:
                if c.prompt_reported:  # (a reported 0 is no size: the estimate stands in, as in prompt_tokens)
                    return c.prompt_reported, "reported"
                # (as the table shows it: calibrated where the tokenizer is not the model's own)
                cal = calibrations if calibrations is not None else self.factors()
                return shown_used(c, cal.breakdown(c)), "estimated"
        return None, "unknown"

    def contexts(self) -> list[str]:
        """Distinct contexts in order of appearance (``main`` first when present)."""
        seen: dict[str, None] = {}
        for c in self.calls:
            seen.setdefault(c.context, None)
        ctxs = list(seen)
        if "main" in ctxs:
            ctxs.remove("main")
            ctxs.insert(0, "main")
        return ctxs
