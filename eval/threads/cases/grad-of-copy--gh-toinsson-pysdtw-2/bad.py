# Soft-DTW discrepancy between two batches of sequences, following the library's README
# example moved to the GPU; the gradient with respect to X is read from X.grad.
import torch

torch.manual_seed(0)
device = torch.device("cpu")
dtype = torch.float64  # the move to the GPU in the thread; a copy here as well


def pairwise_l2_squared(x, y):
    return ((x.unsqueeze(2) - y.unsqueeze(1)) ** 2).sum(-1)


class SoftDTW(torch.nn.Module):
    def __init__(self, gamma=1.0, dist_func=pairwise_l2_squared):
        super().__init__()
        self.gamma = gamma
        self.dist_func = dist_func

    def softmin(self, a, b, c):
        stacked = torch.stack([a, b, c], dim=-1)
        return -self.gamma * torch.logsumexp(-stacked / self.gamma, dim=-1)

    def forward(self, X, Y):
        D = self.dist_func(X, Y)
        B, N, M = D.shape
        inf = torch.full((B,), float("inf"), dtype=D.dtype, device=D.device)
        R = [[inf] * (M + 1) for _ in range(N + 1)]
        R[0][0] = torch.zeros(B, dtype=D.dtype, device=D.device)
        for i in range(1, N + 1):
            for j in range(1, M + 1):
                R[i][j] = D[:, i - 1, j - 1] + self.softmin(R[i - 1][j - 1], R[i - 1][j], R[i][j - 1])
        return R[N][M]


# the input data includes a batch dimension
X = torch.rand((10, 5, 7), requires_grad=True).to(device, dtype)
Y = torch.rand((10, 9, 7)).to(device, dtype)

sdtw = SoftDTW(gamma=1.0, dist_func=pairwise_l2_squared)
res = sdtw(X, Y)
loss = res.sum()
loss.backward()

# X.grad now contains the gradient with respect to the loss
print("grad of X:", X.grad if X.grad is None else tuple(X.grad.shape))
