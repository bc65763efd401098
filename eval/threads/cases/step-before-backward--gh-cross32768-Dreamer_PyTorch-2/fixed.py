# Dreamer-style agent: imagine a trajectory with the action model, score it with the value model,
# update the value model, then update the action model from the same imagined lambda returns.
import torch
import torch.nn as nn
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
state_dim, action_dim, horizon, batch_size = 8, 2, 5, 16


class TransitionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(state_dim + action_dim, state_dim)

    def forward(self, state, action):
        return torch.tanh(self.fc(torch.cat([state, action], dim=1)))


class ActionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 32)
        self.fc2 = nn.Linear(32, action_dim)

    def forward(self, state):
        return torch.tanh(self.fc2(torch.relu(self.fc1(state))))


class ValueModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, state):
        return self.fc2(torch.relu(self.fc1(state)))


def lambda_target(rewards, values, gamma=0.99, lambda_=0.95):
    targets = torch.zeros_like(values)
    last = values[-1]
    for t in reversed(range(horizon)):
        last = rewards[t] + gamma * ((1 - lambda_) * values[t] + lambda_ * last)
        targets[t] = last
    return targets


transition_model = TransitionModel()
reward_model = nn.Linear(state_dim, 1)
action_model = ActionModel()
value_model = ValueModel()
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)

for update_step in range(3):
    flatten_states = torch.randn(batch_size, state_dim)  # posterior states from the world model
    imaginated_states = []
    state = flatten_states
    for h in range(horizon):
        action = action_model(state)
        state = transition_model(state, action)
        imaginated_states.append(state)
    imaginated_states = torch.stack(imaginated_states)
    imaginated_rewards = reward_model(imaginated_states)
    imaginated_values = value_model(imaginated_states)
    lambda_target_values = lambda_target(imaginated_rewards, imaginated_values)

    # update value model
    value_loss = 0.5 * mse_loss(imaginated_values, lambda_target_values.detach())
    value_optimizer.zero_grad()
    value_loss.backward(retain_graph=True)
    clip_grad_norm_(value_model.parameters(), 100.0)

    # update action model (multiply -1 for gradient ascent)
    action_loss = -1 * (lambda_target_values.mean())
    action_optimizer.zero_grad()
    action_loss.backward()
    value_optimizer.step()
    clip_grad_norm_(action_model.parameters(), 100.0)
    action_optimizer.step()

    print(f"step {update_step}: value_loss {value_loss.item():.4f} action_loss {action_loss.item():.4f}")
