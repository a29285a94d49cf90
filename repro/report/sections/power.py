"""Report section: "How large a regression the gate sees", per column scope of a study.

One row per column scope of a study's count model (``repro.diagnostics.power``): the smallest
shift of one model's value (the range over the models: for a rank statistic it depends on the
model's rank) and of every model's that per-model agreement and the claims' own checks detect
with 80% power at alpha 0.05, and the claims such a shift moves."""

from __future__ import annotations

from repro.diagnostics.power import ALPHA, POWER, POWER_HEADER, gate_power, power_notes, power_rows


def render(ctx) -> str:
    c = ctx.claims
    powers = gate_power(c, ctx.outcomes)
    lines = ["## How large a regression the gate sees", ""]
    if not powers:
        lines.append(
            f"Not computed: study `{c.study.name}` declares no count model (study.toml "
            "`replication`)."
        )
        return "\n".join(lines) + "\n"
    lines += [
        "The gate on measured inputs is per-model agreement (a measured value `differs` from its "
        f"published one when the Holm-adjusted test over the models excludes 0 at alpha {ALPHA:g} "
        "and the difference lies outside the study's declared margin) and each claim's check "
        "under its tolerance for measured inputs. Per column scope: the smallest shift detected "
        f"with {POWER:.0%} power, in the columns' units (points for accuracies), of one model's "
        "value (*one model*: the range over the models; *claims*: the shift in either direction "
        "that changes some claim's verdict, at the model where it is smallest, and the claims it "
        "moves) and of every model's value together (*all models*; a rank statistic never moves). "
        "Fixed stimuli at the full protocol carry no sampling noise: agreement detects any shift "
        "beyond the margin, and a claim's verdict changes at one shift exactly; random stimuli "
        "(PGD's starts) are two draws. `claims --power` prints the same table; "
        "`repro/diagnostics/power.py` says how it is searched.",
        "",
        "| " + " | ".join(POWER_HEADER) + " |",
        "|" + "---|" * len(POWER_HEADER),
    ]
    for row in power_rows(powers):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    lines += ["", "Agreement rule per scope: " + "; ".join(power_notes(powers)) + "."]
    return "\n".join(lines) + "\n"
