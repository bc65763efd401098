# Darts' TFT module (_TFTModule), cut down: the relative time index that is appended to the inputs
# and the causal attention mask are made in forward on the input's device and cached on the module,
# to be remade only when the batch size changes. The model is trained where the Lightning trainer
# ran it (the CPU here), then moved to another device for inference (the meta device stands in for
# the GPU); random series stand in for linear_timeseries.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class _TFTModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, n_features, hidden_size=16,
                 num_attention_heads=2, n_quantiles=3, add_relative_index=True):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.add_relative_index = add_relative_index
        self.input_embedding = nn.Linear(n_features + int(add_relative_index), hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.multihead_attn = nn.MultiheadAttention(hidden_size, num_attention_heads, batch_first=True)
        self.output_layer = nn.Linear(hidden_size, n_quantiles)

        # cached tensors, remade only when the batch size changes
        self.batch_size_last = -1
        self.attention_mask = None
        self.relative_index = None

    def get_relative_index(self, encoder_length, decoder_length, batch_size, device, dtype):
        index = torch.arange(encoder_length + decoder_length, dtype=dtype, device=device)
        index[:encoder_length] = index[:encoder_length] / (encoder_length - 1)
        index[encoder_length:] = index[encoder_length:] / (decoder_length - 1)
        return index.reshape(1, len(index), 1).repeat(batch_size, 1, 1)

    def get_attention_mask_future(self, encoder_length, decoder_length, device):
        total = encoder_length + decoder_length
        return torch.triu(torch.ones(total, total, dtype=torch.bool, device=device), diagonal=1)

    def forward(self, x_in):
        x_past, x_future = x_in
        batch_size = x_past.shape[0]
        encoder_length, decoder_length = self.input_chunk_length, self.output_chunk_length
        x = torch.cat([x_past, x_future], dim=1)

        if batch_size != self.batch_size_last:
            self.attention_mask = self.get_attention_mask_future(encoder_length, decoder_length, x.device)
            if self.add_relative_index:
                self.relative_index = self.get_relative_index(encoder_length, decoder_length, batch_size,
                                                              x.device, x.dtype)
            self.batch_size_last = batch_size

        if self.add_relative_index:
            x = torch.cat([x, self.relative_index], dim=-1)

        embeddings = self.input_embedding(x)
        lstm_out, _ = self.lstm(embeddings)
        attn_out, _ = self.multihead_attn(lstm_out, lstm_out, lstm_out, attn_mask=self.attention_mask)
        return self.output_layer(attn_out[:, encoder_length:])


def quantile_loss(y_hat, y, quantiles=(0.1, 0.5, 0.9)):
    losses = []
    for i, q in enumerate(quantiles):
        errors = y - y_hat[..., i]
        losses.append(torch.max((q - 1) * errors, q * errors))
    return torch.stack(losses).mean()


model = _TFTModule(input_chunk_length=4, output_chunk_length=2, n_features=1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [((torch.randn(8, 4, 1), torch.randn(8, 2, 1)), torch.randn(8, 2)) for _ in range(3)]
model.train()
for x_in, target in batches:
    optimizer.zero_grad()
    loss = quantile_loss(model(x_in), target)
    loss.backward()
    optimizer.step()
print("batch_size_last:", model.batch_size_last)

# inference on another device, with the same batch size as in training
model.to(device)
model.eval()
with torch.no_grad():
    (x_past, x_future), _ = batches[0]
    prediction = model((x_past.to(device), x_future.to(device)))
print(prediction.shape, prediction.device.type)
