# SLM-Lab style ActorCritic: the agent body stores the log-probabilities and entropies of
# the actions taken during an episode; at training time the actor's policy loss is built
# from those lists.
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Body:
    def __init__(self):
        self.log_probs = []
        self.entropies = []


class ActorCritic:
    def __init__(self, state_dim=4, action_dim=2, add_entropy=True, entropy_coef=0.01):
        self.body = Body()
        self.actor = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, action_dim))
        self.critic = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, 1))
        self.actor_optim = torch.optim.Adam(self.actor.parameters(), lr=1e-2)
        self.add_entropy, self.entropy_coef = add_entropy, entropy_coef

    def act(self, state):
        pd = Categorical(logits=self.actor(state))
        action = pd.sample()
        self.body.log_probs.append(pd.log_prob(action))
        self.body.entropies.append(pd.entropy())
        return action.item()

    def calc_policy_loss(self, advs):
        '''Calculate the actor's policy loss'''
        assert len(self.body.log_probs) == len(advs), f'{len(self.body.log_probs)} vs {len(advs)}'
        log_probs = torch.stack(self.body.log_probs)
        entropies = torch.stack(self.body.entropies)
        if self.add_entropy:
            policy_loss = (- log_probs * advs) - self.entropy_coef * entropies
        else:
            policy_loss = - log_probs * advs
        return torch.mean(policy_loss)

    def train_actor(self, states, rewards):
        with torch.no_grad():
            advs = rewards - self.critic(states).squeeze(-1)
        policy_loss = self.calc_policy_loss(advs)
        self.actor_optim.zero_grad()
        policy_loss.backward()
        self.actor_optim.step()
        self.body.log_probs.clear()
        self.body.entropies.clear()
        return policy_loss


agent = ActorCritic()
before = [p.detach().clone() for p in agent.actor.parameters()]
for episode in range(3):
    states = torch.randn(20, 4)
    actions = [agent.act(s) for s in states]
    rewards = torch.tensor([1.0 if a == 1 else 0.0 for a in actions])
    loss = agent.train_actor(states, rewards)
    print(f"episode {episode} policy loss {loss.item():.4f}")

# -- corpus check --
if all(torch.equal(b, p) for b, p in zip(before, agent.actor.parameters())):
    print("BUG: the actor's weights never changed")
