#!/usr/bin/python3
"""bench_torch.py: torch's side of tests/bench_kernels.c.

Times torch 1.13's forward of the book's MultiHeadAttention (ch03.ipynb,
In [36]) for Exercise 3.3, MultiHeadAttention(768, 768, 1024, 0.0, 12) on a
(1, 1024, 768) input, with one thread, and prints which libblas the process
actually mapped (/proc/self/maps). The BLAS is whatever the dynamic loader
finds: the system's reference BLAS by default, OpenBLAS when the caller sets
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread (and
OPENBLAS_NUM_THREADS=1).

usage: bench_torch.py [--runs N] [--dump DIR] [--backward]
  --dump DIR  also write the input, the weights and the output of the first
              forward as raw little-endian float32 files into DIR, for the C
              forward to recompute and compare bit for bit.
  --backward  time the forward and backward instead, as Exercise 3.3's
              gradient cell runs them: x.requires_grad_(), out = mha(x),
              out.sum().backward() (after one untimed warm-up run), in wall
              and in CPU time (time.process_time()), and check the gradients
              against the same module in float64: the BLAS in use must
              compute them right, not only fast.

Prints human-readable lines, and for bench_kernels.c one line
  RESULT <median seconds> <blas library path>
(with --backward, for bench_backward.py:
  RESULT <median> <fastest> <CPU median> <CPU fastest> <blas library path>)
or, when torch cannot be imported,
  RESULT unavailable <reason>
The exit status is 0 either way: a benchmark never fails.
"""
import argparse
import os
import statistics
import sys
import time


def mapped_blas():
    """The libblas / libopenblas file this process has mapped."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            if name.startswith(("libblas", "libopenblas")):
                return path
    return "(no libblas mapped)"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dump", default=None)
    parser.add_argument("--backward", action="store_true")
    args = parser.parse_args()
    try:
        import torch
        # The book's class (ch03.ipynb In [36]), as the exporter holds it unchanged.
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: the package export
        sys.dont_write_bytecode = True  # no __pycache__ in tools/export/
        from export.ch03_6 import MultiHeadAttention
    except Exception as exc:  # noqa: BLE001 - any failure means "no torch (or h5py) here"
        print(f"torch: not importable ({type(exc).__name__}: {exc})")
        print(f"RESULT unavailable {type(exc).__name__}")
        return 0

    torch.set_num_threads(1)  # one thread against one thread
    torch.manual_seed(123)  # as Exercise 3.3 seeds it
    mha = MultiHeadAttention(768, 768, 1024, 0.0, 12)  # training mode, as the book runs it; p = 0
    x = torch.rand(1, 1024, 768)
    blas = mapped_blas()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, libblas: {blas}")

    if args.backward:
        return forward_backward(torch, mha, x, args.runs, blas)

    times = []
    with torch.no_grad():  # inference: no autograd graph (only makes torch faster)
        for run in range(args.runs):
            t0 = time.perf_counter()
            out = mha(x)
            times.append(time.perf_counter() - t0)
            if run == 0 and args.dump:
                tensors = {
                    "x": x, "W_query": mha.W_query.weight, "W_key": mha.W_key.weight,
                    "W_value": mha.W_value.weight, "out_proj_weight": mha.out_proj.weight,
                    "out_proj_bias": mha.out_proj.bias, "out": out,
                }
                for name, t in tensors.items():
                    t.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(args.dump, name + ".f32"))
    median = statistics.median(times)
    print("torch forward: " + ", ".join(f"{t * 1e3:.1f}" for t in times) + f" ms; median {median * 1e3:.1f} ms")
    print(f"RESULT {median:.6f} {blas}")
    return 0


def forward_backward(torch, mha, x, runs, blas):
    """Times x.requires_grad_(); mha(x).sum().backward(), one warm-up run and
    then `runs` timed ones, and checks the last run's gradients against the
    module in float64 (relative to the largest gradient of each tensor)."""
    def step():
        xg = x.detach().clone().requires_grad_()
        mha.zero_grad(set_to_none=True)
        t0, c0 = time.perf_counter(), time.process_time()
        mha(xg).sum().backward()
        return time.perf_counter() - t0, time.process_time() - c0, xg.grad

    step()  # warm-up: torch's first call allocates what the others reuse
    times, cpu, x_grad = [], [], None
    for _ in range(runs):
        t, c, x_grad = step()
        times.append(t)
        cpu.append(c)
    grads = {"x": x_grad, **{name: p.grad for name, p in mha.named_parameters()}}
    mha64 = type(mha)(768, 768, 1024, 0.0, 12).double()
    mha64.load_state_dict(mha.state_dict())
    x64 = x.detach().double().requires_grad_()
    mha64(x64).sum().backward()
    ref = {"x": x64.grad, **{name: p.grad for name, p in mha64.named_parameters()}}
    worst = max(float((grads[k].double() - ref[k]).abs().max() / ref[k].abs().max()) for k in ref)
    median = statistics.median(times)
    print("torch forward + backward: " + ", ".join(f"{t * 1e3:.1f}" for t in times) +
          f" ms; median {median * 1e3:.1f} ms; CPU " + ", ".join(f"{c * 1e3:.1f}" for c in cpu) +
          f" ms; gradients against float64: worst {worst:.1e} of the largest")
    if worst > 1e-4:
        print(f"RESULT wrong gradients ({worst:.1e} from float64's) {blas}")
    else:
        print(f"RESULT {median:.6f} {min(times):.6f} {statistics.median(cpu):.6f} {min(cpu):.6f} {blas}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
