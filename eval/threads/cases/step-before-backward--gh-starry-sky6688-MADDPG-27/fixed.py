# MADDPG agent: the critic is updated first (as in the paper), then the actor, whose loss was
# computed through the critic before the critic's optimizer stepped.
import torch
import torch.nn as nn

torch.manual_seed(0)
n_agents, obs_dim, act_dim, batch_size, gamma = 2, 6, 2, 32, 0.95


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 64)
        self.action_out = nn.Linear(64, act_dim)

    def forward(self, x):
        return torch.tanh(self.action_out(torch.relu(self.fc1(x))))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(n_agents * (obs_dim + act_dim), 64)
        self.q_out = nn.Linear(64, 1)

    def forward(self, state, action):
        x = torch.cat(state + action, dim=1)
        return self.q_out(torch.relu(self.fc1(x)))


class MADDPG:
    def __init__(self, agent_id):
        self.agent_id = agent_id
        self.actor_network = Actor()
        self.critic_network = Critic()
        self.actor_target_network = Actor()
        self.critic_target_network = Critic()
        self.actor_target_network.load_state_dict(self.actor_network.state_dict())
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-4)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    def train(self, transitions, other_agents):
        r = transitions["r_%d" % self.agent_id]
        o = [transitions["o_%d" % i] for i in range(n_agents)]
        u = [transitions["u_%d" % i] for i in range(n_agents)]
        o_next = [transitions["o_next_%d" % i] for i in range(n_agents)]

        with torch.no_grad():
            u_next, index = [], 0
            for agent_id in range(n_agents):
                if agent_id == self.agent_id:
                    u_next.append(self.actor_target_network(o_next[agent_id]))
                else:
                    u_next.append(other_agents[index].actor_target_network(o_next[agent_id]))
                    index += 1
            q_next = self.critic_target_network(o_next, u_next)
            target_q = r.unsqueeze(1) + gamma * q_next

        # the q loss
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        # the actor loss: re-select this agent's action, keep the others
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = -self.critic_network(o, u).mean()

        # update the network: critic first, then actor
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss.item(), actor_loss.item()


agents = [MADDPG(i) for i in range(n_agents)]
for step in range(3):
    transitions = {}
    for i in range(n_agents):
        transitions["o_%d" % i] = torch.randn(batch_size, obs_dim)
        transitions["u_%d" % i] = torch.rand(batch_size, act_dim) * 2 - 1
        transitions["r_%d" % i] = torch.randn(batch_size)
        transitions["o_next_%d" % i] = torch.randn(batch_size, obs_dim)
    for agent in agents:
        other_agents = [a for a in agents if a is not agent]
        print(agent.agent_id, agent.train(transitions, other_agents))
