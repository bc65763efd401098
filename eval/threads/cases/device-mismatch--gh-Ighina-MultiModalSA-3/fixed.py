# Multimodal sentiment analysis (CMU-MOSEI), attention-based model with Transformer encoders for
# the audio and video features (the --Transformer option of Train.py). The models live in
# models.py; Train.py picks the GPU when there is one (the meta device stands in for it here).
# Random padded sequences stand in for the aligned MOSEI features.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_mask(src, lengths):
    """Create a mask hiding the padded steps of each sample."""
    mask = []
    max_len = src.shape[1]
    for index, i in enumerate(src):
        mask.append([False if i < lengths[index] else True for i in range(max_len)])
    return torch.tensor(mask)


class PositionalEncoding(nn.Module):

    def __init__(self, d_model, dropout=0.1, max_len=500):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = torch.zeros(max_len, d_model)
        for pos in range(max_len):
            for i in range(0, d_model, 2):
                pe[pos, i] = math.sin(pos / (10000 ** ((2 * i) / d_model)))
                try:
                    pe[pos, i + 1] = math.cos(pos / (10000 ** ((2 * (i + 1)) / d_model)))
                except IndexError:
                    pass
        self.register_buffer('pe', pe, persistent=False)

    def forward(self, x):
        x = x + self.pe[:x.size(1), :]
        return self.dropout(x)


class Transformer(nn.Module):
    """Transformer encoder, partially based on the PyTorch transformer tutorial"""
    def __init__(self, in_dim, h_dim, n_heads, n_layers, dropout=0.2, drop_out=0.0):
        super(Transformer, self).__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(in_dim, dropout)
        encoder_layers = nn.TransformerEncoderLayer(in_dim, n_heads, h_dim, dropout, batch_first=True)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, n_layers, norm=nn.LayerNorm(in_dim),
                                                         enable_nested_tensor=False)
        self.in_dim = in_dim
        self.drop_out = drop_out

    def forward(self, src, line_len=None):
        src = src * math.sqrt(self.in_dim)
        src = self.pos_encoder(src)
        if line_len is not None:
            mask = create_mask(src, line_len).to(src.device)
        else:
            mask = None
        output = self.transformer_encoder(src, src_key_padding_mask=mask)
        if self.drop_out:
            output = F.dropout(output, p=self.drop_out)
        return src, output


class AttentionMultiModal(nn.Module):
    def __init__(self, audio_shape, text_shape, video_shape, hidden_encoder_audio=16, hidden_encoder_video=16,
                 audio_heads=2, video_heads=3, nlayers=1, drop_enc_in=0.1):
        super(AttentionMultiModal, self).__init__()
        self.audio = Transformer(audio_shape, hidden_encoder_audio, audio_heads, nlayers, drop_enc_in)
        self.video = Transformer(video_shape, hidden_encoder_video, video_heads, nlayers, drop_enc_in)
        self.text_proj = nn.Linear(text_shape, audio_shape + video_shape)
        self.attention = nn.Linear(audio_shape + video_shape, 1)
        self.out = nn.Linear(audio_shape + video_shape, 1)

    def forward(self, audio_input, text_input, video_input, line_len=None):
        enc_audio = self.audio(audio_input, line_len)[1]
        enc_video = self.video(video_input, line_len)[1]
        encoded = torch.cat([enc_audio, enc_video], dim=-1) + self.text_proj(text_input)
        weights = torch.softmax(self.attention(torch.tanh(encoded)), dim=1)
        return self.out((weights * encoded).sum(1)).squeeze(-1)


def make_batches(n_batches=3, batch_size=8, max_len=12):
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(4, max_len + 1, (batch_size,))
        batches.append((torch.randn(batch_size, max_len, 8), torch.randn(batch_size, max_len, 12),
                        torch.randn(batch_size, max_len, 6), lengths, torch.randn(batch_size)))
    return batches


device = torch.device("meta")  # torch.device("cuda") if torch.cuda.is_available() else "cpu"
model = AttentionMultiModal(8, 12, 6).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.L1Loss()
for epoch in range(2):
    model.train()
    for audio, text, video, lengths, labels in make_batches():
        audio, text, video, labels = audio.to(device), text.to(device), video.to(device), labels.to(device)
        optimizer.zero_grad()
        predictions = model(audio, text, video, line_len=lengths)
        loss = loss_fn(predictions, labels)
        loss.backward()
        optimizer.step()
    print("epoch", epoch, loss.shape, loss.device)
