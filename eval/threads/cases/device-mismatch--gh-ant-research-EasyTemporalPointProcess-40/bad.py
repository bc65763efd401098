# Attentive Neural Hawkes Process (AttNHP) of a temporal point process toolkit: a TorchBaseModel
# base class puts the model on the configured GPU in __init__, AttNHP builds a layer mask next to
# the attention mask of the batch and concatenates the two into one combined mask, and the runner
# computes the log-likelihood loss of each batch. The meta device stands in for the GPU
# (model_config.gpu = 0 in the taxi example); random event sequences stand in for the taxi data.
import math
from types import SimpleNamespace

import torch
from torch import nn

torch.manual_seed(0)


def set_device(gpu=-1):
    return torch.device("meta") if gpu >= 0 else torch.device("cpu")  # torch.device(f"cuda:{gpu}")


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_input, d_model, dropout=0.1, output_linear=False):
        super().__init__()
        self.d_k = d_model // n_head
        self.n_head = n_head
        self.linears = nn.ModuleList([nn.Linear(d_input, d_model) for _ in range(3)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask):
        query, key, value = [lin(x) for lin, x in zip(self.linears, (query, key, value))]
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        scores = scores.masked_fill(mask, -1e9)
        return torch.matmul(self.dropout(torch.softmax(scores, dim=-1)), value)


class EncoderLayer(nn.Module):
    def __init__(self, d_model, self_attn, use_residual=False, dropout=0.1):
        super().__init__()
        self.self_attn = self_attn
        self.use_residual = use_residual

    def forward(self, x, mask):
        out = self.self_attn(x, x, x, mask)
        return x + out if self.use_residual else out


class TorchBaseModel(nn.Module):
    def __init__(self, model_config):
        super().__init__()
        self.num_event_types = model_config.num_event_types
        self.layer_type_emb = nn.Embedding(model_config.num_event_types + 1, model_config.hidden_size)
        self.loss_integral_num_sample_per_step = model_config.loss_integral_num_sample_per_step
        self.device = set_device(model_config.gpu)
        self.to(self.device)

    def make_dtime_loss_samples(self, time_delta_seq):
        dtimes_ratio_sampled = torch.linspace(0, 1, self.loss_integral_num_sample_per_step,
                                              device=self.device)[None, None, :]
        return time_delta_seq[:, :, None] * dtimes_ratio_sampled


class AttNHP(TorchBaseModel):
    def __init__(self, model_config):
        super().__init__(model_config)
        self.d_model = model_config.hidden_size
        self.d_time = model_config.time_emb_size
        self.n_layers = model_config.num_layers
        self.n_head = model_config.num_heads
        self.heads = nn.ModuleList([
            nn.ModuleList([EncoderLayer(self.d_model + self.d_time,
                                        MultiHeadAttention(1, self.d_model + self.d_time, self.d_model, 0.0))
                           for _ in range(self.n_layers)])
            for _ in range(self.n_head)])
        self.inten_linear = nn.Linear(self.d_model * self.n_head, self.num_event_types)
        self.layer_intensity = nn.Sequential(self.inten_linear, nn.Softplus())
        self.to(self.device)

    def compute_temporal_embedding(self, time):
        div_term = torch.exp(torch.arange(0, self.d_time, 2, device=time.device) * -(math.log(10000.0) / self.d_time))
        _time = time.unsqueeze(-1)
        return torch.cat([torch.sin(_time * div_term), torch.cos(_time * div_term)], dim=-1)

    def seq_encoding(self, time_seqs, event_seqs):
        time_emb = self.compute_temporal_embedding(time_seqs)
        type_emb = torch.tanh(self.layer_type_emb(event_seqs.long()))
        return torch.cat([type_emb, time_emb], dim=-1), time_emb, type_emb

    def make_layer_mask(self, attention_mask):
        layer_mask = (torch.eye(attention_mask.size(1)) < 1).unsqueeze(0).expand_as(attention_mask)
        return layer_mask

    def make_combined_att_mask(self, attention_mask, layer_mask):
        combined_mask = torch.cat([attention_mask, layer_mask], dim=-1)
        contextual_mask = torch.cat([attention_mask, torch.ones_like(layer_mask)], dim=-1)
        return torch.cat([contextual_mask, combined_mask], dim=1)

    def forward_pass(self, init_cur_layer, time_emb, sample_time_emb, event_emb, combined_mask):
        cur_layers = []
        seq_len = event_emb.size(1)
        for head_i in range(self.n_head):
            cur_layer_ = init_cur_layer
            for layer_i in range(self.n_layers):
                layer_ = torch.cat([cur_layer_, sample_time_emb], dim=-1)
                _combined_input = torch.cat([event_emb, layer_], dim=1)
                enc_output = self.heads[head_i][layer_i](_combined_input, combined_mask)
                cur_layer_ = torch.tanh(enc_output[:, seq_len:, :]) + cur_layer_
                event_emb = torch.cat([enc_output[:, :seq_len, :], time_emb], dim=-1)
            cur_layers.append(cur_layer_)
        return torch.cat(cur_layers, dim=-1)

    def forward(self, time_seqs, event_seqs, attention_mask, sample_times=None):
        event_emb, time_emb, type_emb = self.seq_encoding(time_seqs, event_seqs)
        init_cur_layer = torch.zeros_like(type_emb)
        layer_mask = self.make_layer_mask(attention_mask)
        sample_time_emb = time_emb if sample_times is None else self.compute_temporal_embedding(sample_times)
        combined_mask = self.make_combined_att_mask(attention_mask, layer_mask)
        return self.forward_pass(init_cur_layer, time_emb, sample_time_emb, event_emb, combined_mask)

    def loglike_loss(self, batch):
        time_seqs, time_delta_seqs, type_seqs, batch_non_pad_mask, attention_mask = batch
        enc_out = self.forward(time_seqs[:, :-1], type_seqs[:, :-1], attention_mask[:, :-1, :-1], time_seqs[:, 1:])
        lambda_at_event = self.layer_intensity(enc_out)
        temp_time = self.make_dtime_loss_samples(time_delta_seqs[:, 1:])
        sample_times = temp_time + time_seqs[:, :-1].unsqueeze(-1)
        lambda_t_sample = self.compute_intensities_at_sample_times(time_seqs[:, :-1], time_delta_seqs[:, :-1],
                                                                   type_seqs[:, :-1], sample_times,
                                                                   attention_mask=attention_mask[:, :-1, :-1])
        mask = batch_non_pad_mask[:, 1:]
        type_mask = nn.functional.one_hot(type_seqs[:, 1:].long(), self.num_event_types).bool()
        event_ll = (torch.log(lambda_at_event + 1e-9) * (type_mask & mask.unsqueeze(-1))).sum()
        non_event_ll = (lambda_t_sample.sum(-1).mean(-1) * time_delta_seqs[:, 1:] * mask).sum()
        return -(event_ll - non_event_ll), mask.sum()

    def compute_intensities_at_sample_times(self, time_seqs, time_delta_seqs, type_seqs, sample_times, **kwargs):
        attention_mask = kwargs.get("attention_mask", None)
        if attention_mask is None:
            batch_size, seq_len = time_seqs.size()
            attention_mask = torch.triu(torch.ones(seq_len, seq_len), diagonal=1).unsqueeze(0)
            attention_mask = attention_mask.expand(batch_size, -1, -1).to(torch.bool)
        num_samples = sample_times.size(-1)
        intensities = []
        for i in range(num_samples):
            enc_out = self.forward(time_seqs, type_seqs, attention_mask, sample_times[..., i])
            intensities.append(self.layer_intensity(enc_out))
        return torch.stack(intensities, dim=-2)


model_config = SimpleNamespace(num_event_types=5, hidden_size=16, time_emb_size=8, num_layers=2, num_heads=2,
                               loss_integral_num_sample_per_step=4, gpu=0)
model = AttNHP(model_config)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def make_batch(batch_size=4, seq_len=6):
    time_delta_seqs = torch.rand(batch_size, seq_len)
    time_seqs = time_delta_seqs.cumsum(-1)
    type_seqs = torch.randint(0, model_config.num_event_types, (batch_size, seq_len))
    batch_non_pad_mask = torch.ones(batch_size, seq_len, dtype=torch.bool)
    attention_mask = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    attention_mask = attention_mask.unsqueeze(0).expand(batch_size, -1, -1)
    return [t.to(model.device) for t in (time_seqs, time_delta_seqs, type_seqs, batch_non_pad_mask, attention_mask)]


train_loader = [make_batch() for _ in range(3)]
model.train()
for epoch in range(2):
    for batch in train_loader:
        optimizer.zero_grad()
        loss, num_event = model.loglike_loss(batch)
        (loss / num_event).backward()
        optimizer.step()
    print(f"epoch {epoch}: done ({model.device})")

# one-step intensities without a given attention mask, as the thinning sampler asks for them
time_seqs, time_delta_seqs, type_seqs, _, _ = train_loader[0]
with torch.no_grad():
    lam = model.compute_intensities_at_sample_times(time_seqs, time_delta_seqs, type_seqs, time_seqs.unsqueeze(-1))
print(tuple(lam.shape))
