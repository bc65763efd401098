# RelGAN generator pretraining (MLE) with a relational memory core: its multi-head attention
# splits the projected memory into q, k, v and scales q in place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RelationalMemory(nn.Module):
    def __init__(self, mem_slots, head_size, input_size, num_heads=2):
        super().__init__()
        self.mem_slots = mem_slots
        self.num_heads = num_heads
        self.mem_size = head_size * num_heads
        self.key_size = head_size
        self.value_size = head_size
        self.qkv_size = 2 * self.key_size + self.value_size
        self.qkv_projector = nn.Linear(self.mem_size, self.num_heads * self.qkv_size)
        self.qkv_layernorm = nn.LayerNorm([self.mem_slots + 1, self.num_heads * self.qkv_size])
        self.input_projector = nn.Linear(input_size, self.mem_size)
        self.attended_memory_layernorm = nn.LayerNorm([self.mem_slots + 1, self.mem_size])

    def initial_state(self, batch_size):
        init_state = torch.stack([torch.eye(self.mem_slots) for _ in range(batch_size)])
        pad = torch.zeros((batch_size, self.mem_slots, self.mem_size - self.mem_slots))
        return torch.cat([init_state, pad], -1)

    def multihead_attention(self, memory):
        qkv = self.qkv_layernorm(self.qkv_projector(memory))
        mem_slots = memory.shape[1]
        qkv_reshape = qkv.view(qkv.shape[0], mem_slots, self.num_heads, self.qkv_size)
        qkv_transpose = qkv_reshape.permute(0, 2, 1, 3)
        q, k, v = torch.split(qkv_transpose, [self.key_size, self.key_size, self.value_size], -1)

        # scale q with d_k, the dimensionality of the key vectors
        q *= (self.key_size ** -0.5)

        dot_product = torch.matmul(q, k.permute(0, 1, 3, 2))
        weights = F.softmax(dot_product, dim=-1)
        output = torch.matmul(weights, v)
        output_transpose = output.permute(0, 2, 1, 3).contiguous()
        return output_transpose.view((output_transpose.shape[0], output_transpose.shape[1], -1))

    def forward_step(self, inputs, memory):
        inputs_reshape = self.input_projector(inputs).unsqueeze(dim=1)
        memory_plus_input = torch.cat([memory, inputs_reshape], dim=1)
        next_memory = self.attended_memory_layernorm(
            memory_plus_input + self.multihead_attention(memory_plus_input))
        next_memory = next_memory[:, :-1, :]
        return next_memory.view(next_memory.shape[0], -1), next_memory

    def forward(self, inputs, memory):
        logits = []
        for idx_step in range(inputs.shape[1]):
            logit, memory = self.forward_step(inputs[:, idx_step], memory)
            logits.append(logit.unsqueeze(1))
        return torch.cat(logits, dim=1), memory


class RelGAN_G(nn.Module):
    def __init__(self, vocab_size=30, embed_dim=16, mem_slots=1, head_size=16, num_heads=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, embed_dim)
        self.lstm = RelationalMemory(mem_slots, head_size, embed_dim, num_heads)
        self.lstm2out = nn.Linear(mem_slots * head_size * num_heads, vocab_size)

    def forward(self, inp, hidden):
        emb = self.embeddings(inp)
        out, hidden = self.lstm(emb, hidden)
        return self.lstm2out(out).view(-1, self.lstm2out.out_features)


gen = RelGAN_G()
gen_opt = torch.optim.Adam(gen.parameters(), lr=1e-2)
target = torch.randint(0, 30, (4, 6))
inp = torch.cat([torch.zeros(4, 1, dtype=torch.long), target[:, :-1]], dim=1)

for epoch in range(2):
    hidden = gen.lstm.initial_state(inp.size(0))
    pred = gen(inp, hidden)
    loss = F.nll_loss(F.log_softmax(pred, dim=-1), target.view(-1))
    gen_opt.zero_grad()
    loss.backward()
    gen_opt.step()
    print("MLE epoch", epoch, loss.item())
