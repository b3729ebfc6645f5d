"""The onnx package for the bench's export scripts (python3-onnx), or a clear error where it is missing.

The scripts run from bench/, which Python puts first on sys.path and which holds the exported models in
bench/onnx/. Without python3-onnx, `import onnx` finds that folder as a namespace package, and the first use
fails with "module 'onnx' has no attribute 'load'". require_onnx() says what is missing instead.
"""


class OnnxMissing(ImportError):
    pass


def require_onnx():
    """The onnx module; OnnxMissing (an ImportError) when python3-onnx is not installed."""
    try:
        import onnx as module
    except ImportError as e:
        raise OnnxMissing(f"python3-onnx is missing (apt-get install python3-onnx; bench/run.sh installs it): {e}")
    if not hasattr(module, "load"):
        where = ", ".join(getattr(module, "__path__", [])) or "a module without onnx.load"
        raise OnnxMissing("python3-onnx is missing (apt-get install python3-onnx; bench/run.sh installs it): "
                          f"`import onnx` found {where}, not the package")
    return module
