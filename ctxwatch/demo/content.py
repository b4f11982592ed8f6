"""The fictional repository the synthetic agent works on, and the tool outputs it reads from it.

Each generator yields plausible lines forever from a seeded :class:`random.Random` (source files, pytest output,
grep hits, a tree, diffs, a JSON fixture, a documentation page); :func:`fill` stops at a token target, so a tool
result is as large as the story needs.  ``scripts/make_samples.py`` writes the other formats' samples with them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

#: The source and test files of the fictional ``invoicer`` package, which the agent reads, tests and patches.
SOURCE_FILES = (
    "src/invoicer/tax.py", "src/invoicer/models.py", "src/invoicer/currency.py", "src/invoicer/api.py",
    "src/invoicer/storage.py", "src/invoicer/render.py", "src/invoicer/export_csv.py", "src/invoicer/cli.py",
)
TEST_FILES = ("tests/test_tax.py", "tests/test_models.py", "tests/test_export_csv.py", "tests/test_api.py")
_NOUNS = ("invoice", "line", "customer", "rate", "total", "discount", "currency", "ledger", "payment", "refund",
          "period", "amount", "vat", "subtotal", "credit_note", "batch")
_VERBS = ("compute", "apply", "load", "save", "render", "validate", "split", "merge", "round", "convert", "sum",
          "group", "parse", "format")
_TYPES = ("Decimal", "Invoice", "InvoiceLine", "Customer", "Money", "list[InvoiceLine]", "dict[str, Decimal]",
          "str", "int", "TaxRate")


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}"


def code_lines(rng: random.Random, path: str) -> Iterator[str]:
    """Plausible Python source lines for ``path``: a module docstring, imports, then functions forever."""
    mod = path.rsplit("/", 1)[-1].removesuffix(".py")
    yield f'"""{mod.replace("_", " ").capitalize()}: part of invoicer."""'
    yield ""
    yield "from __future__ import annotations"
    yield ""
    yield "from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal"
    yield "from invoicer.models import Invoice, InvoiceLine, Money, TaxRate"
    yield ""
    yield 'CENT = Decimal("0.01")'
    while True:
        name = _ident(rng)
        a, b = rng.sample(_NOUNS, 2)
        yield ""
        yield ""
        test = path.startswith("tests/")
        if test:
            yield f"def test_{name}_{a}() -> None:"
            yield f"    {a} = make_{a}(lines=[(\"{rng.randint(1, 99)}.{rng.randint(10, 99)}\", {rng.randint(1, 9)}),"
            yield f"                        (\"{rng.randint(1, 99)}.{rng.randint(10, 99)}\", {rng.randint(1, 9)})])"
            yield f"    result = {name}({a}, rounding=ROUND_HALF_{rng.choice(('UP', 'EVEN'))})"
            yield f"    assert result.{b} == Decimal(\"{rng.randint(10, 999)}.{rng.randint(10, 99)}\")"
            continue
        yield f"def {name}({a}: {rng.choice(_TYPES)}, *, {b}: {rng.choice(_TYPES)} | None = None) -> " \
              f"{rng.choice(_TYPES)}:"
        yield f'    """{name.replace("_", " ").capitalize()} for one {a}, {b} taken into account.'
        yield ""
        mode = rng.choice(("ROUND_HALF_UP", "ROUND_HALF_EVEN"))
        yield f"    Amounts are Decimal; the result is rounded to cents with {mode}."
        yield '    """'
        for _ in range(rng.randint(3, 8)):
            x, y = rng.sample(_NOUNS, 2)
            yield rng.choice((
                f"    {x} = ({a}.{y} * {b or 1}).quantize(CENT, rounding=ROUND_HALF_UP)",
                f"    if {x} is None:\n        raise ValueError(f\"missing {x} on {{{a}!r}}\")",
                f"    {x} = sum((l.{y} for l in {a}.lines), start=Decimal(0))",
                f"    for item in {a}.{x}s:\n        {y} += item.{x}.quantize(CENT)",
                f"    {x} = {_ident(rng)}({a}, {y}={y})",
                f"    # {x} is rounded per line (docs/rounding.md, rule {rng.randint(1, 9)})",
            ))
        yield f"    return {rng.choice(_NOUNS)}"


def numbered(lines: Iterator[str], start: int = 1) -> Iterator[str]:
    """``lines`` split at their newlines and numbered from ``start`` as ``read_file`` shows them (``    7\tcode``)."""
    n = start
    for block in lines:
        for line in block.split("\n"):
            yield f"{n:>5}\t{line}"
            n += 1


def pytest_lines(rng: random.Random, path: str) -> Iterator[str]:
    """A pytest session's output: the header, then test results forever, about 30 % failing and some with a
    rounding assertion's traceback (``path`` is not used: the tests come from :data:`TEST_FILES`)."""
    yield "============================= test session starts =============================="
    yield "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0"
    yield "rootdir: /workspace/invoicer"
    yield "configfile: pyproject.toml"
    yield f"collected {rng.randint(40, 140)} items"
    yield ""
    while True:
        tf = rng.choice(TEST_FILES)
        name = f"test_{_ident(rng)}"
        yield f"{tf}::{name} FAILED" if rng.random() < 0.3 else f"{tf}::{name} PASSED"
        if rng.random() < 0.15:
            got, want = rng.randint(100, 999), rng.randint(10, 99)
            yield ""
            yield f"________________________________ {name} ________________________________"
            yield ""
            yield f"    def {name}() -> None:"
            yield f"        invoice = make_invoice(lines=[(\"{got}.{want}\", 3), (\"{want}.{got % 100:02d}\", 1)])"
            yield ">       assert total_with_vat(invoice) == Decimal(\"119.00\")"
            yield f"E       AssertionError: assert Decimal('119.0{rng.randint(1, 9)}') == Decimal('119.00')"
            yield f"E        +  where Decimal('119.0{rng.randint(1, 9)}') = total_with_vat(Invoice(id={got}, lines=2))"
            yield ""
            yield f"{tf}:{rng.randint(10, 300)}: AssertionError"


def grep_lines(rng: random.Random, pattern: str) -> Iterator[str]:
    """``search_code`` hits (``path:line:    text``) for the first word of the regular expression ``pattern``."""
    word = pattern.strip("\\()^$").split("\\")[0] or "quantize"
    while True:
        f = rng.choice(SOURCE_FILES + TEST_FILES)
        a, b = rng.sample(_NOUNS, 2)
        yield f"{f}:{rng.randint(5, 400)}:    {a} = ({b}.{word} * rate).quantize(CENT, rounding=ROUND_HALF_UP)"


def tree_lines(rng: random.Random) -> Iterator[str]:
    """``list_directory``'s tree of the repository, then fixture file names forever."""
    yield "."
    yield "├── pyproject.toml"
    yield "├── README.md"
    yield "├── docs/"
    yield "│   ├── rounding.md"
    yield "│   └── vat.md"
    yield "├── src/invoicer/"
    for f in SOURCE_FILES:
        yield f"│   ├── {f.rsplit('/', 1)[-1]}"
    yield "├── tests/"
    for f in TEST_FILES:
        yield f"│   ├── {f.rsplit('/', 1)[-1]}"
    yield "│   └── fixtures/"
    while True:
        yield f"│       ├── {rng.choice(_NOUNS)}_{rng.randint(2019, 2024)}_{rng.randint(1, 12):02d}.json"


def diff_lines(rng: random.Random, path: str) -> Iterator[str]:
    """A unified diff of ``path``: its header, then hunks that round each line before summing, forever."""
    yield f"diff --git a/{path} b/{path}"
    yield "index 3f2a9c1..8be4d07 100644"
    yield f"--- a/{path}"
    yield f"+++ b/{path}"
    while True:
        n = rng.randint(10, 300)
        a, b = rng.sample(_NOUNS, 2)
        yield f"@@ -{n},7 +{n},7 @@ def {_ident(rng)}({a}: Invoice) -> Decimal:"
        yield f"     {a} = {a}.lines"
        yield f"-    {b} = sum(l.net * l.rate for l in {a}).quantize(CENT)"
        yield f"+    {b} = sum(((l.net * l.rate).quantize(CENT) for l in {a}), start=Decimal(0))"
        yield f"     return {b}"


def fixture_lines(rng: random.Random) -> Iterator[str]:
    """The large JSON fixture of 2024 invoices, one invoice per line, forever (the file the drifted agent reads
    whole)."""
    yield "["
    n = 0
    while True:
        n += 1
        lines = ", ".join(
            f'{{"sku": "{rng.choice(_NOUNS).upper()}-{rng.randint(1000, 9999)}", "qty": {rng.randint(1, 40)}, '
            f'"unit_price": "{rng.randint(1, 900)}.{rng.randint(0, 99):02d}", '
            f'"vat_rate": "0.{rng.choice((19, 7, 21))}"}}'
            for _ in range(rng.randint(1, 4)))
        yield (f'  {{"id": "INV-2024-{n:05d}", "customer": "C{rng.randint(10000, 99999)}", '
               f'"issued": "2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "lines": [{lines}], '
               f'"total": "{rng.randint(10, 20000)}.{rng.randint(0, 99):02d}"}},')


def fill(lines: Iterator[str], target: int, count: Callable[[str], int]) -> str:
    """Join ``lines`` with newlines until their tokens reach ``target``: ``count(line)`` tokens each, plus one
    for its newline (at least one line)."""
    out: list[str] = []
    total = 0
    for line in lines:
        out.append(line)
        total += count(line) + 1
        if total >= target:
            break
    return "\n".join(out)


def doc_lines(rng: random.Random) -> Iterator[str]:
    """The ``rounding`` documentation page (``fetch_docs``), its examples forever."""
    yield "# Rounding"
    yield ""
    yield "Every amount is a Decimal with two places. VAT is computed **per line** and rounded half-up to the cent;"
    yield "the invoice total is the sum of the rounded lines, never the rounded sum (finance rule F-12)."
    while True:
        a, b = rng.sample(_NOUNS, 2)
        mills = rng.randint(1000, 99999)  # an amount with three decimals, in thousandths
        cents = (mills + 5) // 10  # half-up to the cent
        yield (f"- {a.capitalize()}s: the {b} is rounded with ROUND_HALF_UP after conversion "
               f"(example: {mills // 1000}.{mills % 1000:03d} -> {cents // 100}.{cents % 100:02d}).")
