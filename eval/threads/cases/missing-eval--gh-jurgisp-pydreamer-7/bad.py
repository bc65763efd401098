# pydreamer's generator process: it builds the Dreamer world model, loads the latest checkpoint the
# trainer saved, and drives an environment with a NetworkPolicy that runs model.inference() on one
# observation at a time under no_grad. The person's encoder has BatchNorm1d layers. (A toy
# environment and a checkpoint written here stand in for the gym environment and mlflow.)
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, obs_dim, hidden):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(obs_dim, hidden), nn.BatchNorm1d(hidden), nn.ELU(),
                                   nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.ELU())

    def forward(self, obs):
        T, B = obs.shape[:2]
        return self.model(obs.reshape(T * B, -1)).reshape(T, B, -1)


class Dreamer(nn.Module):
    def __init__(self, conf):
        super().__init__()
        self.encoder = Encoder(conf['obs_dim'], conf['hidden'])
        self.core = nn.GRUCell(conf['hidden'], conf['deter_dim'])
        self.actor = nn.Linear(conf['deter_dim'], conf['action_dim'])

    def init_state(self, batch_size):
        return torch.zeros(batch_size, self.core.hidden_size)

    def inference(self, obs, in_state):
        embed = self.encoder(obs['image'])
        state = self.core(embed[0], in_state)
        action_distr = torch.distributions.Categorical(logits=self.actor(state))
        return action_distr, state, {'policy_entropy': action_distr.entropy().mean()}


class Preprocessor:
    def apply(self, obs, expandTB=False):
        image = np.asarray(obs, dtype=np.float32)
        if expandTB:
            image = image[None, None]
        return {'image': image}


class NetworkPolicy:
    def __init__(self, model, preprocess):
        self.model = model
        self.preprocess = preprocess
        self.state = model.init_state(1)

    def __call__(self, obs):
        batch = self.preprocess.apply(obs, expandTB=True)
        obs_model = {k: torch.from_numpy(v) for k, v in batch.items()}
        with torch.no_grad():
            action_distr, new_state, metrics = self.model.inference(obs_model, self.state)
            action = action_distr.sample()
            self.state = new_state
        return action.numpy()[0], {k: v.item() for k, v in metrics.items()}


class ToyEnv:
    def __init__(self, obs_dim):
        self.obs_dim = obs_dim
        self.rng = np.random.default_rng(0)

    def reset(self):
        return self.rng.standard_normal(self.obs_dim)

    def step(self, action):
        return self.rng.standard_normal(self.obs_dim), float(action == 1), False, {}


def main(conf, checkpoint_path, steps=5):
    env = ToyEnv(conf['obs_dim'])
    model = Dreamer(conf)
    model.load_state_dict(torch.load(checkpoint_path)['model_state_dict'])
    policy = NetworkPolicy(model, Preprocessor())
    obs = env.reset()
    episode = []
    for _ in range(steps):
        action, metrics = policy(obs)
        obs, reward, done, _ = env.step(action)
        episode.append((action, reward))
    print(f"generated {len(episode)} steps, return {sum(r for _, r in episode)}")


conf = {'obs_dim': 6, 'hidden': 16, 'deter_dim': 8, 'action_dim': 3}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, 'latest.pt')
    torch.save({'model_state_dict': Dreamer(conf).state_dict()}, path)  # stands in for the trainer's checkpoint
    main(conf, path)
