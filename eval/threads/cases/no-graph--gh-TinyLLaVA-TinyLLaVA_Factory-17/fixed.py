# TinyLLaVA-Factory-style model: a VisionTower wraps the vision encoder (loaded frozen), a connector
# projects the patch features into the language model's embedding space, and the training recipe
# unfreezes the parts named in the training arguments (here tune_type_vision_tower="full", so the
# vision encoder is fine-tuned with the rest). A tiny ViT-like encoder and a tiny LM stand in for
# SigLIP and the LLM; random images and tokens for the instruction data.
import copy
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyViT(nn.Module):
    def __init__(self, dim=32, patch=4, layers=2):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True) for _ in range(layers)])

    def forward(self, x, output_hidden_states=False):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], dim=1)
        hidden_states = [x]
        for block in self.blocks:
            x = block(x)
            hidden_states.append(x)
        return SimpleNamespace(last_hidden_state=x, hidden_states=hidden_states)


class VisionTower(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self._vision_tower = TinyViT()
        self.config = cfg

    def load_model(self, vision_tower_name, **kwargs):
        print("Loading vision tower from ", vision_tower_name)
        self._vision_tower.requires_grad_(False)

    def forward(self, x, **kwargs):
        image_features = self._vision_tower(x, output_hidden_states=True)
        image_features = image_features.hidden_states[kwargs.get("vision_feature_layer", -2)]
        if kwargs.get("vision_feature_select_strategy", "patch") == "patch":
            image_features = image_features[:, 1:]
        return image_features


class TinyLlavaForConditionalGeneration(nn.Module):
    def __init__(self, vocab_size=50, dim=32):
        super().__init__()
        self.vision_tower = VisionTower(cfg=None)
        self.connector = nn.Sequential(nn.Linear(32, dim), nn.GELU(), nn.Linear(dim, dim))
        self.embed_tokens = nn.Embedding(vocab_size, dim)
        self.language_model = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, images, input_ids, labels):
        image_features = self.connector(self.vision_tower(images))
        inputs_embeds = torch.cat([image_features, self.embed_tokens(input_ids)], dim=1)
        hidden = self.language_model(inputs_embeds)
        logits = self.lm_head(hidden[:, image_features.size(1):])
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def tune_type_setting(model, training_arguments):
    if training_arguments.tune_type_vision_tower == "full":
        model.vision_tower._vision_tower.requires_grad_(True)
    if training_arguments.tune_type_connector == "full":
        model.connector.requires_grad_(True)
    return model


training_arguments = SimpleNamespace(tune_type_vision_tower="full", tune_type_connector="full", learning_rate=1e-3)
model = TinyLlavaForConditionalGeneration()
model.vision_tower.load_model("google/siglip-so400m-patch14-384")
model = tune_type_setting(model, training_arguments)
vision_before = copy.deepcopy(model.vision_tower._vision_tower.state_dict())

optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=training_arguments.learning_rate)
model.train()
for step in range(4):
    images = torch.rand(2, 3, 16, 16)
    input_ids = torch.randint(0, 50, (2, 8))
    loss = model(images, input_ids, labels=input_ids)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss", round(loss.item(), 4))

# -- corpus check --
vision_after = model.vision_tower._vision_tower.state_dict()
if all(torch.equal(vision_before[k], vision_after[k]) for k in vision_before):
    print("BUG: the vision tower is tuned (tune_type_vision_tower='full') but its weights never change")
