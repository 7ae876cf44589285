"""Frozen, validated configuration for every run (the profiles that size runs are in `sizes.py`).

A run is fully described by a `RunConfig` (task, model, training, weight-decay schedule); its hash
is the cache key, so every field that changes a result lives here and nothing else does. Fields are
checked on construction and a bad value raises `ConfigError` with one line naming the field.
No torch import here: configs are built (and validated) before any training starts.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from critwin_lib import checks
from critwin_lib.checks import ConfigError  # re-exported: every layer raises and catches config.ConfigError


def _require(ok: bool, name: str, msg: str) -> None:
    if not ok:
        raise ConfigError(f"{name}: {msg}")








# ----------------------------------------------------------------------------------------- task
TASK_NAMES = ("anchor", "modarith", "scan")
ANCHOR_VARIANTS = ("A", "B")
ANCHOR_INPUT_LEN = 9  # input tokens per anchor sequence
ANCHOR_VOCAB_SIZE = 201  # ids 0..200, 0 = PAD


def _task_name(value: Any, expected: str) -> None:
    _require(value == expected, "task.name", f"unknown task {value!r}; known: {TASK_NAMES}" if value not in TASK_NAMES
             else f"{value!r} is not the name of a {expected} task config")


@dataclass(frozen=True)
class AnchorTask:
    """Anchor-function composition task (spec §2). Variant B (default) holds out (3,4) and (4,3)."""

    name: str = "anchor"
    variant: str = "B"
    n_train_per_pair: int = 11_250  # training sequences per trained anchor pair (spec §2.3: 157,500 total)
    n_eval: int = 2048  # sequences per evaluation split
    data_seed: int = 1234  # fixes the training set and the eval sets; shared by all runs
    vocab_size: ClassVar[int] = ANCHOR_VOCAB_SIZE
    seq_len: ClassVar[int] = ANCHOR_INPUT_LEN  # longest model input (the model's max_pos must reach it)

    def __post_init__(self) -> None:
        _task_name(self.name, "anchor")
        _require(self.variant in ANCHOR_VARIANTS, "task.variant",
                 f"unknown variant {self.variant!r}; known: {ANCHOR_VARIANTS}")
        checks.count(self.n_train_per_pair, "task.n_train_per_pair")
        checks.count(self.n_eval, "task.n_eval")
        checks.seed(self.data_seed, "task.data_seed")





MODARITH_OPS = ("add", "sub", "mul", "div")


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % k for k in range(2, math.isqrt(p) + 1))


def check_modarith_table(p: Any, op: Any) -> None:
    """Refuse a modulus that is not prime or an unknown operation (ConfigError naming task.p / task.op)."""
    _require(isinstance(p, int) and not isinstance(p, bool) and _is_prime(p), "task.p",
             f"must be a prime (the answers form a field mod p), got {p!r}")
    _require(op in MODARITH_OPS, "task.op", f"unknown operation {op!r}; known: {MODARITH_OPS}")


@dataclass(frozen=True)
class ModArithTask:
    """(a ∘ b) mod p, the grokking task (claim C8, spec §6): inputs [a, b, =], the answer at the last
    position, a seeded split of all pairs into a training fraction and the held-out rest ("test")."""

    name: str = "modarith"
    p: int = 113
    op: str = "add"
    train_frac: float = 0.3
    data_seed: int = 0

    def __post_init__(self) -> None:
        _task_name(self.name, "modarith")
        check_modarith_table(self.p, self.op)
        _require(isinstance(self.train_frac, int | float) and 0 < self.train_frac < 1, "task.train_frac",
                 f"must be in (0, 1), got {self.train_frac!r}")
        n_pairs = self.p * (self.p - 1 if self.op == "div" else self.p)
        _require(1 <= int(self.train_frac * n_pairs) < n_pairs, "task.train_frac",
                 f"{self.train_frac} of {n_pairs} pairs leaves an empty split")
        checks.seed(self.data_seed, "task.data_seed")
        object.__setattr__(self, "train_frac", float(self.train_frac))

    @property
    def vocab_size(self) -> int:
        return self.p + 1  # 0..p-1 and "=" (id p)

    @property
    def seq_len(self) -> int:
        return 3


SCAN_SPLITS = ("addprim_jump",)
SCAN_VOCAB_SIZE = 22  # 13 command words + 6 actions + PAD, SEP, EOS (spec §7)
SCAN_SEQ_LEN = 58  # 9 command slots + SEP + 48 actions; the model never reads the final EOS


@dataclass(frozen=True)
class ScanTask:
    """SCAN (claim C9, spec §7) as one decoder-only sequence "command SEP actions EOS": commands left-padded
    to 9 slots so actions always start at position 10; loss on the action tokens and EOS. `n_val` commands of
    the training file (not bare "jump") are held out to show the model learned the training distribution;
    each evaluation split is scored by greedy exact match on `n_eval` commands (0: all of them)."""

    name: str = "scan"
    split: str = "addprim_jump"
    n_val: int = 1000
    n_eval: int = 1000
    data_seed: int = 0
    vocab_size: ClassVar[int] = SCAN_VOCAB_SIZE
    seq_len: ClassVar[int] = SCAN_SEQ_LEN

    def __post_init__(self) -> None:
        _task_name(self.name, "scan")
        _require(self.split in SCAN_SPLITS, "task.split", f"unknown split {self.split!r}; known: {SCAN_SPLITS}")
        _require(isinstance(self.n_val, int) and 0 < self.n_val <= 6000, "task.n_val",
                 f"must be an integer in [1, 6000] (held-out training commands), got {self.n_val!r}")
        _require(isinstance(self.n_eval, int) and not isinstance(self.n_eval, bool) and self.n_eval >= 0,
                 "task.n_eval", f"must be a non-negative integer (0: every command), got {self.n_eval!r}")
        checks.seed(self.data_seed, "task.data_seed")



TaskConfig = AnchorTask | ModArithTask | ScanTask
TASK_CONFIGS: dict[str, type] = {"anchor": AnchorTask, "modarith": ModArithTask, "scan": ScanTask}


# ---------------------------------------------------------------------------------------- model
INIT_MODES = ("multiplier", "exponent")


@dataclass(frozen=True)
class ModelConfig:
    """Pre-norm decoder-only transformer (spec §3.4).

    Initial weight std: "multiplier" mode (default) std = init_gamma * init_sigma0; "exponent" mode
    (the precursor papers' convention) std = d_model ** -init_gamma. Residual output projections
    are further divided by sqrt(2 * n_layer).
    """

    n_layer: int = 2
    d_model: int = 64
    n_head: int = 2
    d_mlp: int = 256
    vocab_size: int = 201
    max_pos: int = 20
    init_gamma: float = 1.0  # γ, the paper's init scale
    init_sigma0: float | None = None  # base std σ₀; None means d_model ** -0.5 (resolved on construction)
    init_mode: str = "multiplier"

    def __post_init__(self) -> None:
        for f in ("n_layer", "d_model", "n_head", "d_mlp", "vocab_size", "max_pos"):
            checks.count(getattr(self, f), f"model.{f}")
        _require(self.d_model % self.n_head == 0, "model.n_head",
                 f"d_model={self.d_model} is not divisible by n_head={self.n_head}")
        checks.at_most(checks.positive_number(self.init_gamma, "model.init_gamma"), checks.MAX_GAMMA,
                       "model.init_gamma", "the init scale γ")
        _require(self.init_mode in INIT_MODES, "model.init_mode",
                 f"unknown init mode {self.init_mode!r}; known: {INIT_MODES}")
        if self.init_sigma0 is None:
            object.__setattr__(self, "init_sigma0", self.d_model ** -0.5)
        checks.positive_number(self.init_sigma0, "model.init_sigma0")
        object.__setattr__(self, "init_gamma", float(self.init_gamma))
        object.__setattr__(self, "init_sigma0", float(self.init_sigma0))

    @property
    def init_std(self) -> float:
        """Std of the non-residual weight matrices and embeddings."""
        if self.init_mode == "multiplier":
            return self.init_gamma * self.init_sigma0
        return self.d_model ** -self.init_gamma

    @property
    def gamma_exponent(self) -> float:
        """The same init written in the exponent convention: std = d_model ** -γ_exp."""
        return -math.log(self.init_std) / math.log(self.d_model)


# ------------------------------------------------------------------------------------- training
OPTIMIZERS = ("adamw", "sgd")
SGD_MOMENTUM = 0.9  # the momentum of every SGD run (claim C12)
# Which parameters weight decay shrinks: "all"; "matrices" (2-D weights, embeddings included: not LayerNorm or
# biases); "matrices-no-embeddings" (the paper's set, its §4: the same without the token and position embeddings).
WD_PARAMS = ("all", "matrices", "matrices-no-embeddings")
PAPER_WD_PARAMS = WD_PARAMS[2]  # the decay set the paper names


@dataclass(frozen=True)
class TrainConfig:
    """One run's optimisation: linear warm-up then constant LR, grad clipping, evals. The optimizer is
    AdamW (decoupled weight decay: p ← p − lr·λ·p) or SGD with momentum (coupled L2: λ·p is added to the
    gradient, as `weight_decay` in torch's SGD; claim C12)."""

    steps: int = 20_000
    batch_size: int = 256
    lr: float = 3e-4
    warmup_steps: int = 200
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    grad_clip: float = 1.0  # max global grad norm; 0 disables clipping
    eval_every: int = 100
    optimizer: str = "adamw"
    momentum: float = SGD_MOMENTUM  # SGD only
    wd_params: str = "all"  # "all" parameters (as the precursor code), 2-D "matrices", or those but the embeddings
    seed: int = 0  # model init and batch order
    instrument: bool = False  # also log the C13 measurements (condensation, stable rank, ...) at each eval

    def __post_init__(self) -> None:
        for f in ("steps", "batch_size", "eval_every"):
            checks.count(getattr(self, f), f"train.{f}")
        checks.positive_number(self.lr, "train.lr")
        _require(isinstance(self.warmup_steps, int) and 0 <= self.warmup_steps <= self.steps,
                 "train.warmup_steps", f"must be an integer in [0, steps={self.steps}], got {self.warmup_steps!r}")
        for f in ("beta1", "beta2"):
            v = getattr(self, f)
            _require(isinstance(v, int | float) and 0 <= v < 1, f"train.{f}", f"must be in [0, 1), got {v!r}")
        checks.positive_number(self.eps, "train.eps")
        checks.non_negative(self.grad_clip, "train.grad_clip", "a non-negative number")
        _require(self.optimizer in OPTIMIZERS, "train.optimizer",
                 f"unknown optimizer {self.optimizer!r}; known: {OPTIMIZERS}")
        _require(isinstance(self.momentum, int | float) and 0 <= self.momentum < 1, "train.momentum",
                 f"must be in [0, 1), got {self.momentum!r}")
        _require(self.wd_params in WD_PARAMS, "train.wd_params",
                 f"unknown parameter set {self.wd_params!r}; known: {WD_PARAMS}")
        _require(isinstance(self.seed, int) and self.seed >= 0, "train.seed",
                 f"must be a non-negative integer, got {self.seed!r}")
        _require(isinstance(self.instrument, bool), "train.instrument",
                 f"must be True or False, got {self.instrument!r}")


# --------------------------------------------------------------------------------- weight decay
@dataclass(frozen=True)
class WDSchedule:
    """Weight decay λ(t) as a pure function of the step: `base` everywhere, `value` inside windows.

    `windows` is a tuple of half-open [start, end) step intervals with their in-window λ; `ramps` holds
    (start, end, from, to) intervals where λ goes linearly from `from` (at start) towards `to` (reached at
    end). Use the constructors: `none()`, `constant(lam)`, `window(start, length, lam)`, `budget_matched(...)`.
    """

    base: float = 0.0
    windows: tuple[tuple[int, int, float], ...] = ()
    ramps: tuple[tuple[int, int, float, float], ...] = ()

    def __post_init__(self) -> None:
        checks.at_most(checks.non_negative(self.base, "wd.base", "a non-negative number"), checks.MAX_LAMBDA,
                       "wd.base", "λ")
        windows = tuple(tuple(w) for w in self.windows)
        for i, w in enumerate(windows):
            name = f"wd.windows[{i}]"
            _require(len(w) == 3, name, f"must be (start, end, lambda), got {w!r}")
            start, end, lam = w
            _require(isinstance(start, int) and isinstance(end, int) and 0 <= start < end, name,
                     f"needs integer steps 0 <= start < end, got [{start!r}, {end!r})")
            checks.at_most(checks.non_negative(lam, name, "a non-negative number"), checks.MAX_LAMBDA, name, "λ")
        ramps = tuple(tuple(r) for r in self.ramps)
        for i, r in enumerate(ramps):
            _require(len(r) == 4 and all(isinstance(x, int) for x in r[:2]) and 0 <= r[0] < r[1],
                     f"wd.ramps[{i}]", f"must be (start, end, from, to) with integer steps 0 <= start < end, got {r!r}")
            for lam in r[2:]:
                checks.at_most(checks.non_negative(lam, f"wd.ramps[{i}]", "a non-negative number"), checks.MAX_LAMBDA,
                               f"wd.ramps[{i}]", "λ")
        ordered = sorted(windows + tuple(r[:2] for r in ramps))
        for a, b in zip(ordered, ordered[1:], strict=False):
            _require(a[1] <= b[0], "wd.windows", f"intervals [{a[0]}, {a[1]}) and [{b[0]}, {b[1]}) overlap")
        object.__setattr__(self, "base", float(self.base))
        object.__setattr__(self, "windows", tuple((int(s), int(e), float(v)) for s, e, v in sorted(windows)))
        object.__setattr__(self, "ramps", tuple((int(s), int(e), float(a), float(b)) for s, e, a, b in sorted(ramps)))

    @classmethod
    def none(cls) -> WDSchedule:
        return cls()

    @classmethod
    def constant(cls, lam: float) -> WDSchedule:
        return cls(base=lam)

    @classmethod
    def window(cls, start: int, length: int, lam: float) -> WDSchedule:
        return cls(windows=((int(start), int(start) + int(length), lam),))

    @classmethod
    def budget_matched(cls, budget: float, start: int, length: int) -> WDSchedule:
        """Put the whole budget B = Σ_t λ_t into one window [start, start+length)."""
        checks.non_negative(budget, "wd.budget", "a non-negative number")
        checks.count(length, "wd.length")
        return cls.window(start, length, budget / length)

    @property
    def is_none(self) -> bool:
        """True when λ is 0 at every step."""
        return self.base == 0 and all(v == 0 for _, _, v in self.windows) and all(r[2:] == (0, 0) for r in self.ramps)

    @property
    def label(self) -> str:
        if not self.windows and not self.ramps:
            return "none" if self.base == 0 else f"constant λ={self.base:g}"
        parts = [f"[{s}, {e}) λ={v:g}" for s, e, v in self.windows] + [
            f"[{s}, {e}) λ {a:g}→{b:g}" for s, e, a, b in self.ramps]
        return ("" if self.base == 0 else f"base λ={self.base:g}, ") + ", ".join(parts)


# ------------------------------------------------------------------------------------------ run
@dataclass(frozen=True)
class RunConfig:
    """Everything that determines one training run (and so its cache key)."""

    task: TaskConfig = field(default_factory=AnchorTask)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    wd: WDSchedule = field(default_factory=WDSchedule)

    def __post_init__(self) -> None:
        for i, (start, end, _) in enumerate(self.wd.windows):
            _require(end <= self.train.steps, f"wd.windows[{i}]",
                     f"window [{start}, {end}) ends after the run (train.steps = {self.train.steps})")
        _require(isinstance(self.task, tuple(TASK_CONFIGS.values())), "task",
                 f"must be a task config ({', '.join(c.__name__ for c in TASK_CONFIGS.values())}), "
                 f"got {type(self.task).__name__}")
        name = self.task.name
        _require(self.model.max_pos >= self.task.seq_len, "model.max_pos",
                 f"must be >= {self.task.seq_len} for the {name} task, got {self.model.max_pos}")
        _require(self.model.vocab_size == self.task.vocab_size, "model.vocab_size",
                 f"must be {self.task.vocab_size} for the {name} task, got {self.model.vocab_size}")
        _require(not self.train.instrument or name == "anchor", "train.instrument",
                 f"the C13 measurements read the anchor task's tokens; not available for the {name} task")


def to_dict(cfg: RunConfig) -> dict[str, Any]:
    """Plain JSON-ready dict (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(cfg)))


def from_dict(d: dict[str, Any]) -> RunConfig:
    """Inverse of `to_dict`; unknown keys are an error."""
    wd = dict(d.get("wd", {}))
    wd["windows"] = tuple(tuple(w) for w in wd.get("windows", ()))
    wd["ramps"] = tuple(tuple(r) for r in wd.get("ramps", ()))
    try:
        task = dict(d.get("task", {}))
        name = task.get("name", "anchor")
        _require(name in TASK_CONFIGS, "task.name", f"unknown task {name!r}; known: {TASK_NAMES}")
        return RunConfig(task=TASK_CONFIGS[name](**task), model=ModelConfig(**d.get("model", {})),
                         train=TrainConfig(**d.get("train", {})), wd=WDSchedule(**wd))
    except TypeError as e:  # unexpected keyword
        raise ConfigError(f"config: {e}") from None


# Fields added after results were shipped, with the value that reproduces the old behaviour: while a
# field holds that value it is left out of the canonical JSON, so adding it does not re-key old runs.
HASH_NEUTRAL_DEFAULTS: dict[tuple[str, str], Any] = {("train", "instrument"): False,
                                                     ("train", "momentum"): SGD_MOMENTUM, ("wd", "ramps"): []}


def canonical_json(cfg: RunConfig) -> str:
    """The config as sorted, compact JSON: what the cache key hashes."""
    d = to_dict(cfg)
    m = d["model"]
    if m["init_mode"] == "multiplier":  # the key hashes the init std, not how it is factored into γ · σ₀
        base = m["d_model"] ** -0.5
        m["init_gamma"], m["init_sigma0"] = m["init_gamma"] * m["init_sigma0"] / base, base
    for (section, name), neutral in HASH_NEUTRAL_DEFAULTS.items():
        if d[section].get(name) == neutral:
            del d[section][name]
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def replace(cfg: RunConfig, **dotted: Any) -> RunConfig:
    """Copy of `cfg` with dotted fields changed, e.g. replace(cfg, **{"model.init_gamma": 1.5})."""
    parts: dict[str, dict[str, Any]] = {}
    for key, value in dotted.items():
        section, _, name = key.partition(".")
        _require(section in ("task", "model", "train", "wd") and bool(name), key, "unknown config field")
        parts.setdefault(section, {})[name] = value
    new = {}
    for section, changes in parts.items():
        sub = getattr(cfg, section)
        known = {f.name for f in dataclasses.fields(sub)}
        for name in changes:
            _require(name in known, f"{section}.{name}", "unknown config field")
        new[section] = dataclasses.replace(sub, **changes)
    return dataclasses.replace(cfg, **new)
