# Anomaly-Transformer style minimax training: two losses from one forward pass, each followed by
# optimizer.step(), the second backward going through the same graph after the first step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AnomalyAttention(nn.Module):
    def __init__(self, win_size, d_model):
        super().__init__()
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, 1)
        distances = torch.arange(win_size).float()
        self.register_buffer("distances", (distances[None, :] - distances[:, None]).abs())

    def forward(self, x):
        scores = self.query(x) @ self.key(x).transpose(1, 2) / x.size(-1) ** 0.5
        series = torch.softmax(scores, dim=-1)
        sigma = torch.sigmoid(self.sigma(x)) * 5 + 1e-5
        prior = torch.exp(-self.distances ** 2 / (2 * sigma ** 2))
        prior = prior / prior.sum(-1, keepdim=True)
        return series @ self.value(x), series, prior


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size, enc_in, d_model=16):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.attention = AnomalyAttention(win_size, d_model)
        self.projection = nn.Linear(d_model, enc_in)

    def forward(self, x):
        out, series, prior = self.attention(self.embedding(x))
        return self.projection(out), [series], [prior]


def my_kl_loss(p, q):
    res = p * (torch.log(p + 1e-4) - torch.log(q + 1e-4))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class Solver:
    def __init__(self, win_size=10, enc_in=4, k=3):
        self.k = k
        self.model = AnomalyTransformer(win_size, enc_in)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.criterion = nn.MSELoss()

    def train(self, train_loader):
        for i, input_data in enumerate(train_loader):
            self.optimizer.zero_grad()
            output, series, prior = self.model(input_data)

            series_loss, prior_loss = 0.0, 0.0
            for u in range(len(prior)):
                series_loss += torch.mean(my_kl_loss(series[u], prior[u].detach())) + torch.mean(
                    my_kl_loss(prior[u].detach(), series[u]))
                prior_loss += torch.mean(my_kl_loss(prior[u], series[u].detach())) + torch.mean(
                    my_kl_loss(series[u].detach(), prior[u]))
            series_loss = series_loss / len(prior)
            prior_loss = prior_loss / len(prior)

            rec_loss = self.criterion(output, input_data)
            loss1 = rec_loss - self.k * series_loss
            loss2 = rec_loss + self.k * prior_loss

            # Minimax strategy
            loss1.backward(retain_graph=True)
            # self.optimizer.step()
            loss2.backward()
            self.optimizer.step()
            print(f"iter {i}: loss1 {loss1.item():.4f} loss2 {loss2.item():.4f}")


train_loader = [torch.randn(8, 10, 4) for _ in range(3)]
Solver().train(train_loader)
