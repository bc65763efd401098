# VG-HuBERT-style audio encoder (word-discovery, models/audio_encoder.py), wav2vec 2.0 layout:
# a convolutional feature extractor, LayerNorm and a projection, a convolutional relative
# positional embedding (weight-normed Conv1d + SamePad + GELU) added to the features, a CLS
# token, and a transformer encoder. It is trained against image embeddings with a contrastive
# loss; random waveforms and image vectors stand in for SpokenCOCO.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.conv_layers = nn.Sequential(nn.Conv1d(1, dim, 10, stride=5), nn.GELU(),
                                         nn.Conv1d(dim, dim, 3, stride=2), nn.GELU())

    def forward(self, source):
        return self.conv_layers(source.unsqueeze(1))


class AudioEncoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.feature_extractor = ConvFeatureExtractionModel(args.conv_dim)
        self.layer_norm = nn.LayerNorm(args.conv_dim)
        self.post_extract_proj = nn.Linear(args.conv_dim, args.encoder_embed_dim)
        self.dropout_input = nn.Dropout(args.dropout_input)
        self.pos_conv = nn.Conv1d(args.encoder_embed_dim, args.encoder_embed_dim, kernel_size=args.conv_pos,
                                  padding=args.conv_pos // 2, groups=args.conv_pos_groups)
        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(args.conv_pos), nn.GELU())
        self.cls_token = nn.Parameter(torch.randn(1, 1, args.encoder_embed_dim))
        layer = nn.TransformerEncoderLayer(args.encoder_embed_dim, 4, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)

    def forward(self, source, padding_mask=None):
        features = self.feature_extractor(source)
        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)
        features = self.dropout_input(features)

        x = features
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x + x_conv
        if self.args.use_audio_cls_token:
            x = torch.cat([self.cls_token.repeat(x.shape[0], 1, 1), x], dim=1)

        layer_feats = self.encoder(x)
        cls_token = layer_feats[:, 0]
        return {"cls_token": cls_token, "features": layer_feats[:, 1:]}


args = SimpleNamespace(conv_dim=32, encoder_embed_dim=32, dropout_input=0.1, conv_pos=8, conv_pos_groups=4,
                       use_audio_cls_token=True)
audio_encoder = AudioEncoder(args)
image_proj = nn.Linear(48, 32)
optimizer = torch.optim.AdamW(list(audio_encoder.parameters()) + list(image_proj.parameters()), lr=1e-4)

for step in range(2):
    audio = torch.randn(4, 1600)
    visual_feats = torch.randn(4, 48)
    audio_cls = F.normalize(audio_encoder(audio)["cls_token"], dim=-1)
    visual_cls = F.normalize(image_proj(visual_feats), dim=-1)
    logits = audio_cls @ visual_cls.t() / 0.07
    loss = (F.cross_entropy(logits, torch.arange(4)) + F.cross_entropy(logits.t(), torch.arange(4))) / 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
