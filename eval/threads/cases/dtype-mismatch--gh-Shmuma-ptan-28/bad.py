# A DQN on CartPole with ptan, in the shape of the book's cartpole scripts: the agent turns the
# environment's observations into a batch with its states preprocessor and runs the network on
# it. The few pieces of ptan used are written out below (default_states_preprocessor keeps the
# numpy dtype; float32_preprocessor casts to float32); a tiny CartPole-like environment returns
# float64 observations as gym's classic-control environments do.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


# --- the parts of ptan.agent this script uses ---
def default_states_preprocessor(states):
    if len(states) == 1:
        np_states = np.expand_dims(states[0], 0)
    else:
        np_states = np.array([np.array(s, copy=False) for s in states], copy=False)
    return torch.tensor(np_states)


def float32_preprocessor(states):
    np_states = np.array(states, dtype=np.float32)
    return torch.tensor(np_states)


class ArgmaxActionSelector:
    def __call__(self, scores):
        return np.argmax(scores, axis=1)


class DQNAgent:
    def __init__(self, dqn_model, action_selector, device="cpu", preprocessor=default_states_preprocessor):
        self.dqn_model = dqn_model
        self.action_selector = action_selector
        self.preprocessor = preprocessor
        self.device = device

    @torch.no_grad()
    def __call__(self, states, agent_states=None):
        if agent_states is None:
            agent_states = [None] * len(states)
        if self.preprocessor is not None:
            states = self.preprocessor(states)
            if torch.is_tensor(states):
                states = states.to(self.device)
        q_v = self.dqn_model(states)
        q = q_v.data.cpu().numpy()
        actions = self.action_selector(q)
        return actions, agent_states
# --- end of ptan ---


class CartPoleLike:
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.t = 0
        return self.rng.uniform(-0.05, 0.05, size=4)

    def step(self, action):
        self.t += 1
        return self.rng.uniform(-0.05, 0.05, size=4), 1.0, self.t >= 10, {}


HIDDEN_SIZE = 128


class Net(nn.Module):
    def __init__(self, obs_size, hidden_size, n_actions):
        super(Net, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(obs_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, n_actions)
        )

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    env = CartPoleLike()
    net = Net(4, HIDDEN_SIZE, 2)
    selector = ArgmaxActionSelector()
    agent = DQNAgent(net, selector)

    obs = env.reset()
    total_reward = 0.0
    while True:
        actions, _ = agent([obs])
        obs, reward, done, _ = env.step(actions[0])
        total_reward += reward
        if done:
            break
    print("episode reward", total_reward)
