import torch
from torch import nn


class Agent:
    def __init__(self, state_dim, n_actions, device):
        self.device = device
        self.q = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, n_actions)).to(device)

    def act(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        q_values = self.q(state)
        return q_values.argmax(1)


agent = Agent(4, 2, torch.device("meta"))
print(agent.act([0.1, 0.2, 0.3, 0.4]))
