"""run.py: a run of one chapter: what it reads (settings, seeds) and what it records."""

import hashlib
import sys

import numpy as np
import torch
import torch.nn as nn

# A tensor with more elements than this is stored as a digest (README: "Large tensors").
LARGE = 2 ** 18


def bits_equal(a, b):
    """Same shape and the same float32 bit patterns (NaN payloads and zero signs included)."""
    a, b = a.detach().contiguous(), b.detach().contiguous()
    return a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))


class Digest:
    """A tensor of more than LARGE elements as the fixture holds it: the
    SHA-256 of its float32 little-endian C-order bytes, its shape, and its
    first and last rows along the last axis."""

    def __init__(self, a):
        assert a.dtype == np.float32 and a.flags["C_CONTIGUOUS"] and a.ndim >= 2
        assert sys.byteorder == "little" and a.dtype.byteorder in "=<"
        self.shape = tuple(a.shape)
        self.sha256 = hashlib.sha256(a).hexdigest()
        rows = a.reshape(-1, a.shape[-1])
        self.first_row, self.last_row = rows[0].copy(), rows[-1].copy()


class Run:
    """One configuration of one chapter: its settings, its seeds, and the
    datasets and attributes it produces.

    settings: {attribute name: value} overriding the book's values;
    seeds: {site: seed}, site None for the chapter's main torch.manual_seed;
    skip: draws discarded after the first seeding (the continuing stream)."""

    def __init__(self, chapter, settings=None, seeds=None, skip=0):
        self.chapter = chapter
        self.settings = dict(settings or {})
        self.seeds = dict(seeds or {})
        self.skip = skip
        self.attrs = {}       # attribute name -> str or int, in the order read
        self.data = {}        # dataset name -> (float32 C-order ndarray, role)
        self.modules = {}     # id(module) -> its notebook path ("mha.heads.0")
        self.noise_calls = {}
        self._hooked = set()
        self._seeded = False
        self._unused_seeds = set(self.seeds)

    # -- datasets --
    def keep(self, name, t, role="output", digest=False):
        """digest: store a tensor of two axes or more as its digest whatever its size."""
        assert role in ("input", "weight", "random", "output"), role
        t = t.detach()
        if t.dtype != torch.float32:
            raise TypeError(f"{self.chapter}: {name!r} is {t.dtype}, not float32")
        if t.numel() > LARGE or (digest and t.dim() >= 2):
            # Too large to store: its digest and rows, taken now (no copy).
            self.data[name] = (Digest(t.contiguous().numpy()), role)
            return
        a = np.array(t.contiguous().numpy(), dtype=np.float32, order="C", copy=True)
        assert a.shape == tuple(t.shape)
        self.data[name] = (a, role)

    def keep_long(self, name, t, role="output"):
        """An int64 tensor (token ids, a batch of them), stored whole."""
        t = t.detach()
        if t.dtype != torch.int64:
            raise TypeError(f"{self.chapter}: {name!r} is {t.dtype}, not int64")
        if t.numel() > 2 ** 20:
            raise SystemExit(f"export_fixtures: {self.chapter}: {name!r} has {t.numel()} ids, more than a fixture holds")
        a = np.array(t.contiguous().numpy(), dtype=np.int64, order="C", copy=True)
        self.data[name] = (a, role)

    def backward_sum(self, name, m, x, x_name, digest=False):
        """litattn's Beyond cell after a module's forward:

            x.requires_grad_()
            context_vecs = m(x)
            loss = context_vecs.sum()
            loss.backward()

        with torch's own autograd; records every parameter's .grad as
        `<name>.<state_dict key>.grad` and x's as `<x_name>.grad`. The forward's
        locals are not recorded again (the forward cell's stay); a dropout in
        training mode draws its next mask, recorded as `<dropout>.noise.<k>`.
        Then x requires no grad again, as the later cells found it."""
        assert x.is_leaf and not x.requires_grad and x.grad is None, x_name
        assert all(p.grad is None for p in m.parameters()), name
        x.requires_grad_()
        context_vecs = m(x)
        loss = context_vecs.sum()
        loss.backward()
        for key, p in m.named_parameters():
            self.keep(f"{name}.{key}.grad", p.grad, digest=digest)
        self.keep(f"{x_name}.grad", x.grad, digest=digest)
        x.grad = None
        x.requires_grad_(False)

    def beyond(self, code, names):
        """litattn's Beyond cell `code` (the text the chapter shows), at the
        point where the notebook would run it, with the notebook's names it
        reads; nothing here (the export computes its values itself).
        tools/cases/beyond_check.py runs the text there literally, in torch."""

    def input(self, name, t):
        self.keep(name, t, "input")
        return t

    # -- settings (lib/runtime/config.c's setting_*; every one read is an attribute) --
    def _setting(self, name, book):
        return self.settings.get(name, book)

    def setting_int(self, name, book):
        v = self._setting(name, book)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"setting {name!r}: expected an int, found {v!r}")
        self.attrs[name] = int(v)
        return v

    def setting_bool(self, name, book):
        v = self._setting(name, book)
        if v not in (0, 1, True, False):
            raise TypeError(f"setting {name!r}: expected 0 or 1, found {v!r}")
        self.attrs[name] = int(bool(v))
        return bool(v)

    def setting_float(self, name, book):
        v = self._setting(name, book)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"setting {name!r}: expected a float, found {v!r}")
        v = float(v)
        self.attrs[name] = repr(v)  # the C parses Python's repr() with strtod
        return v

    def unread_settings(self):
        return sorted(set(self.settings) - set(self.attrs))

    # -- the generator --
    def manual_seed(self, site, book_seed):
        """torch.manual_seed(book_seed) at `site` (None: the chapter's main
        seeding), with this configuration's seed; the first seeding of the
        chapter also discards `skip` draws (lib/runtime/draws.c does the same)."""
        seed = self.seeds.get(site, book_seed)
        self._unused_seeds.discard(site)
        self.attrs["seed" if site is None else f"{site}.seed"] = str(int(seed))
        torch.manual_seed(seed)
        if not self._seeded:
            self._seeded = True
            self.attrs["skip"] = int(self.skip)
            if self.skip:
                # float32 torch.rand takes exactly one 32-bit draw per element.
                torch.rand(self.skip)

    def draw_rand(self, name, shape, role):
        """torch.rand(*shape), recorded as drawn."""
        t = torch.rand(*shape)
        self.keep(name, t, role)
        return t

    # -- modules --
    def module(self, name, m, digest_weights=False):
        """`name = m` in the notebook: records m's parameters as drawn and
        names m and its submodules for what their forward() computes.
        digest_weights: every parameter of two axes or more as a digest (the
        chapter draws them itself in fixture mode too)."""
        for key, p in m.named_parameters():
            self.keep(f"{name}.{key}", p, "weight", digest=digest_weights)
        for sub, mod in m.named_modules():
            self.modules[id(mod)] = f"{name}.{sub}" if sub else name
            if isinstance(mod, nn.Dropout) and id(mod) not in self._hooked:
                self._hooked.add(id(mod))
                mod.register_forward_pre_hook(self._dropout_before)
                mod.register_forward_hook(self._dropout_after)
        return m

    def _dropout_before(self, mod, inputs):
        mod._litattn_state = torch.get_rng_state()

    def _dropout_after(self, mod, inputs, output):
        # nn.Dropout in training mode with 0 < p < 1 draws
        # noise = empty_like(x).bernoulli_(1 - p).div_(1 - p) and returns
        # x * noise; otherwise it draws nothing. Re-draw the noise from the
        # saved state with torch itself and check both facts.
        x = inputs[0]
        before, after = mod._litattn_state, torch.get_rng_state()
        del mod._litattn_state
        p = mod.p
        if not (mod.training and 0 < p < 1 and x.numel() > 0):
            assert torch.equal(before, after), f"{self.modules[id(mod)]}: drew with p={p} training={mod.training}"
            return
        torch.set_rng_state(before)
        with torch.no_grad():
            noise = torch.empty_like(x).bernoulli_(1 - p).div_(1 - p)
        assert torch.equal(torch.get_rng_state(), after), f"{self.modules[id(mod)]}: noise re-draw out of step"
        assert bits_equal(output, x * noise), f"{self.modules[id(mod)]}: output is not x * noise"
        path = self.modules[id(mod)]
        k = self.noise_calls[path] = self.noise_calls.get(path, 0) + 1
        self.keep(f"{path}.noise" if k == 1 else f"{path}.noise.{k}", noise, "random")

    def _profile(self, frame, event, arg):
        # At the return of a registered module's forward(): its float32
        # tensor locals, the arguments excluded.
        if event != "return" or frame.f_code.co_name != "forward":
            return
        loc = frame.f_locals
        path = self.modules.get(id(loc.get("self")))
        if path is None:
            return
        code = frame.f_code
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
        args = set(code.co_varnames[:nargs])
        for k, v in loc.items():
            if k not in args and isinstance(v, torch.Tensor) and v.dtype == torch.float32:
                self.keep(f"{path}.{k}", v)

    def __enter__(self):
        self._old_profile = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._old_profile)
        return False
