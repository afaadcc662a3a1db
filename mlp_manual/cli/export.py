"""mlp-export: a trained model as an ONNX file that onnxruntime (or any ONNX runtime) can run."""

from pathlib import Path

import click

from .common import import_option, output_file, say, user_errors, version_option


def describe(value_info) -> str:
    """``name (N, 3)`` for a graph input or output."""
    dims = [d.dim_param or str(d.dim_value) for d in value_info.type.tensor_type.shape.dim]
    return f"{value_info.name} ({', '.join(dims)})"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="The ONNX file to write (default: the model's path with .onnx).")
@user_errors
@import_option
def main(model_path, output):
    """Export a trained model to ONNX (opset 17): one graph of the model in evaluation mode, with
    a float32 input of any batch size (a text model, whose first layer is an embedding, takes
    int64 character indices and looks them up with Gather). A classifier gives `logits` and
    `probabilities`, any other model `output`. Needs the onnx package: pip install "mlp-manual[onnx]".

    Examples:

    \b
        mlp-export --model runs/digits/model.npz --output digits.onnx
        mlp-export --model runs/sine/model.npz
    """
    output = output_file(output or Path(model_path).with_suffix(".onnx"), "--output")
    try:
        from ..export.onnx import export_file
    except ImportError as e:
        raise click.ClickException(str(e)) from None
    proto = export_file(model_path, output)
    graph = proto.graph
    from onnx import TensorProto

    kinds = {TensorProto.INT64: "int64 character indices", TensorProto.STRING: "strings (categorical columns)",
             TensorProto.FLOAT: "float32"}
    inputs = ", ".join(f"{describe(i)} {kinds[i.type.tensor_type.elem_type]}" for i in graph.input)
    say(f"wrote {output}: opset {proto.opset_import[0].version}, input{'s' if len(graph.input) > 1 else ''} "
        f"{inputs}, outputs {', '.join(describe(o) for o in graph.output)}")


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
