"""mlp-gradcheck: check hand-written gradients against float64 finite differences."""

import json

import click

from ..errors import GradcheckError
from ..gradcheck.report import format_reports
from ..gradcheck.suites import check_builtins
from ..gradcheck.user import (
    check_config,
    check_user_layer,
    config_batch,
    load_layer,
    split_spec,
    user_layer_input,
)
from .common import (
    config_argument,
    config_option,
    import_option,
    max_elements_option,
    say,
    set_option,
    user_errors,
    version_option,
    warnings_on_stderr,
)

DEFAULT_MAX_ELEMENTS = 1000


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@config_argument
@config_option("Check the whole model of this YAML config, with its loss, on a batch of its data.")
@set_option
@click.option("--layer", "layer_spec", metavar="MODULE:ATTR",
              help="Check your own layer: a class (built for the width of --input-shape when its constructor "
                   "takes features, or in_features and out_features), or a function returning a layer, "
                   "importable from the current directory (or MODULE may be a .py file).")
@click.option("--input-shape", metavar="N,D", help="With --layer: the shape of the input it is checked on.")
@click.option("--eps", type=click.FloatRange(min=0, min_open=True), default=1e-5, show_default=True,
              help="Finite-difference step.")
@click.option("--tol", type=click.FloatRange(min=0, min_open=True), default=1e-7, show_default=True,
              help="Relative error at or below which a tensor passes (up to 1e-4 it is a warning).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of inputs, upstream gradients and samples.")
@max_elements_option(DEFAULT_MAX_ELEMENTS)
@click.option("--precision", is_flag=True,
              help="Instead of finite differences, run each layer in float32 and compare with its own float64 "
                   "result on the same inputs (--eps, --tol and --max-elements do not apply).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and the closing line.")
@user_errors
@warnings_on_stderr
@import_option
def main(config_path, overrides, layer_spec, input_shape, eps, tol, seed, max_elements, precision, as_json, quiet):
    """Check hand-written gradients against float64 central differences.

    With no arguments, checks every built-in layer and loss on several shapes, in train and
    eval mode where they differ. Per tensor it prints the largest absolute and relative error
    |a - n| / max(|a| + |n|, floor), where in the tensor it is, and a verdict: PASS, KINK (a
    perturbation crossed a non-differentiable point and the gradient is a valid subgradient
    there), WARN (between --tol and 1e-4) or FAIL. Every backward is also checked for being
    deterministic, linear in its upstream gradient, shaped like its parameters, and for leaving
    its inputs alone.

    With --precision, each layer's forward and backward run in float32 and in float64 on the
    same float32-rounded inputs; a tensor fails when its float32 error exceeds
    4 * eps32 * sqrt(n) * kappa, kappa being its measured sensitivity to float32 rounding.

    Exit status: 0 when nothing fails, 1 when a tensor or a structural check fails (or the
    object cannot be checked), 2 for a usage error.

    Examples:

    \b
        mlp-gradcheck
        mlp-gradcheck --config configs/xor.yaml
        mlp-gradcheck --layer my_layers:make_layer --input-shape 8,5
        mlp-gradcheck --layer my_layers:Swish --input-shape 4,3 --json
        mlp-gradcheck --precision
    """
    if config_path and layer_spec:
        raise click.UsageError("use either --config or --layer, not both")
    if overrides and not config_path:
        raise click.UsageError("--set only applies to --config")
    if input_shape and not layer_spec:
        raise click.UsageError("--input-shape only applies to --layer")
    if layer_spec and not input_shape:
        raise click.UsageError("--layer needs --input-shape, e.g. --input-shape 8,5")
    if precision:
        return report_precision(config_path, overrides, layer_spec, input_shape, seed, as_json, quiet)
    settings = {"eps": eps, "tol": tol, "seed": seed, "max_elements": max_elements or None}
    if config_path:
        suite = check_config(config_path, overrides, **settings)
    elif layer_spec:
        shape = parse_shape(input_shape)
        suite = check_user_layer(parse_layer_spec(layer_spec), shape, source=f"--layer {layer_spec}", **settings)
    else:
        suite = check_builtins(**settings)
    if as_json:
        say(json.dumps(suite.to_dict(), indent=2))
    elif quiet:
        say(format_reports(suite.reports, only_failures=True))
    else:
        say(str(suite))
    if not suite.passed:
        click.get_current_context().exit(1)


def report_precision(config_path, overrides, layer_spec, input_shape, seed, as_json, quiet):
    """The --precision run: built-in layers, a user's layer, or every layer of a config's model."""
    from ..gradcheck import precision

    if config_path:
        exp, X, _, _ = config_batch(config_path, overrides, seed)
        reports = precision.check_precision_model(exp.model, X, seed)
    elif layer_spec:
        shape = parse_shape(input_shape)
        layer = load_layer(parse_layer_spec(layer_spec), source=f"--layer {layer_spec}", width=shape[-1])
        reports = precision.check_precision_modes(layer, user_layer_input(shape, seed), f"{layer_spec} x{shape}", seed)
    else:
        reports = precision.check_precision_builtins(seed)
    if as_json:
        say(json.dumps(precision.precision_dict(reports), indent=2))
    else:
        say(precision.format_precision(reports, only_failures=quiet))
    if not all(r.passed for r in reports):
        click.get_current_context().exit(1)


def parse_shape(text: str) -> tuple[int, ...]:
    """``8,5`` -> (8, 5); anything but comma-separated positive integers is a usage error."""
    try:
        shape = tuple(int(part) for part in text.split(","))
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise click.BadParameter(f"{text!r}: expected comma-separated positive integers such as 8,5",
                                 param_hint="--input-shape")
    return shape


def parse_layer_spec(text: str) -> str:
    """``module:attr``, checked here so that a malformed one is a usage error."""
    try:
        split_spec(text)
    except GradcheckError as e:
        raise click.BadParameter(str(e), param_hint="--layer") from None
    return text


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
