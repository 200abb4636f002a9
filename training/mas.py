"""Monotonic alignment search (Glow-TTS): the most likely monotonic path of frames over phonemes, every phoneme
getting at least one frame. Two implementations of one function: numba on the CPU cores (fast; used where numba
exists, e.g. on the GPU machine) and a batch-vectorised torch loop over frames (reference; used elsewhere)."""
import numpy as np
import torch

NEG = -1e9

try:
    import numba

    @numba.njit(parallel=True, cache=False)
    def _mas_numba(logp, x_len, y_len, out):
        B = logp.shape[0]
        for b in numba.prange(B):
            L = x_len[b]
            T = y_len[b]
            q = np.full((L, T), NEG, dtype=np.float32)
            q[0, 0] = logp[b, 0, 0]
            for t in range(1, T):
                lo = max(0, L - (T - t))  # states from which the end is still reachable
                hi = min(L - 1, t)
                for l in range(lo, hi + 1):
                    stay = q[l, t - 1]
                    move = q[l - 1, t - 1] if l > 0 else NEG
                    q[l, t] = logp[b, l, t] + (stay if stay >= move else move)
            l = L - 1
            for t in range(T - 1, -1, -1):
                out[b, l, t] = 1.0
                if t > 0 and l > 0 and (l == t or q[l - 1, t - 1] > q[l, t - 1]):
                    l -= 1

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_NUMBA = False


def mas_numba(logp, x_len, y_len):
    lp = logp.detach().float().cpu().numpy()
    out = np.zeros(lp.shape, dtype=np.float32)
    _mas_numba(lp, x_len.cpu().numpy().astype(np.int64), y_len.cpu().numpy().astype(np.int64), out)
    return torch.from_numpy(out).to(logp.device)


@torch.no_grad()
def mas_torch(logp, x_len, y_len):
    """logp [B,L,T] (log-likelihood of frame t under phoneme l) -> path [B,L,T] of 0/1."""
    B, L, T = logp.shape
    dev = logp.device
    li = torch.arange(L, device=dev).view(1, L)
    valid_l = li < x_len.view(B, 1)
    lp = logp.float().masked_fill(~valid_l.unsqueeze(-1), NEG)
    q = torch.full((B, L), NEG, device=dev)
    q[:, 0] = lp[:, 0, 0]
    moved = torch.zeros(B, L, T, dtype=torch.bool, device=dev)  # came from l-1 at frame t
    neg_col = torch.full((B, 1), NEG, device=dev)
    for t in range(1, T):
        prev = torch.cat([neg_col, q[:, :-1]], 1)
        mv = prev > q
        moved[:, :, t] = mv
        q = torch.where(mv, prev, q) + lp[:, :, t]
        q = q.masked_fill(li > t, NEG)
    path = torch.zeros(B, L, T, device=dev)
    idx = (x_len - 1).clone()
    bi = torch.arange(B, device=dev)
    for t in range(T - 1, -1, -1):
        active = t < y_len
        path[bi, idx, t] = active.float()
        if t > 0:
            step = moved[bi, idx, t] | (idx == t)
            idx = idx - (active & step & (idx > 0)).long()
    return path


def frame_log_likelihood(mu, mel):
    """mu [B,80,L] (per-phoneme mean log-mel), mel [B,80,T] -> logp [B,L,T]: each frame's log-likelihood under each
    phoneme's N(mu, 1), up to a constant; what mas() finds the best path through."""
    return -0.5 * ((mu ** 2).sum(1).unsqueeze(-1) - 2 * torch.matmul(mu.transpose(1, 2), mel)
                   + (mel ** 2).sum(1).unsqueeze(1))


def mas(logp, x_len, y_len):
    if HAVE_NUMBA:
        return mas_numba(logp, x_len, y_len)
    return mas_torch(logp, x_len, y_len)


if __name__ == "__main__":
    torch.manual_seed(0)
    B, L, T = 4, 12, 40
    logp = torch.randn(B, L, T)
    xl = torch.tensor([12, 7, 10, 3])
    yl = torch.tensor([40, 25, 10, 33])
    p = mas_torch(logp, xl, yl)
    for b in range(B):
        pb = p[b, :xl[b], :yl[b]]
        assert (pb.sum(0) == 1).all(), "each frame one phoneme"
        assert (pb.sum(1) >= 1).all(), "each phoneme >= 1 frame"
        assert p[b].sum() == yl[b]
        idx = pb.argmax(0)
        assert (idx[1:] - idx[:-1]).ge(0).all() and (idx[1:] - idx[:-1]).le(1).all()
    # brute-force check of optimality on a small case
    import itertools
    L1, T1 = 4, 7
    lp = torch.randn(1, L1, T1)
    best = None
    for cuts in itertools.combinations(range(1, T1), L1 - 1):
        b = [0, *cuts, T1]
        s = sum(lp[0, l, b[l]:b[l + 1]].sum().item() for l in range(L1))
        best = s if best is None or s > best else best
    got = (mas_torch(lp, torch.tensor([L1]), torch.tensor([T1])) * lp).sum().item()
    assert abs(got - best) < 1e-4, (got, best)
    if HAVE_NUMBA:
        pn = mas_numba(logp, xl, yl)
        assert torch.equal(pn, p), "numba != torch"
    print("mas ok, numba:", HAVE_NUMBA)
