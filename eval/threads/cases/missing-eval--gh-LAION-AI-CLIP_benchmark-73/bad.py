# A CLIP benchmark CLI: run(args) loads a CLIP-like model through a registry of loaders
# (model_type -> load function returning model, transform, tokenizer), builds the dataset and the
# dataloader, then calls the zero-shot classification evaluate() of the metrics module.
from contextlib import suppress
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyConvNeXtCLIP(nn.Module):
    """stand-in for an open_clip model: a conv image tower with batch norm and a dropout head"""

    def __init__(self, embed_dim=16, vocab=50, head_drop=0.5):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.GELU(),
                                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(head_drop),
                                    nn.Linear(16, embed_dim))
        self.token_embedding = nn.Embedding(vocab, embed_dim)
        self.text_proj = nn.Linear(embed_dim, embed_dim)

    def encode_image(self, images):
        return self.visual(images)

    def encode_text(self, texts):
        return self.text_proj(self.token_embedding(texts).mean(dim=1))


def create_model_and_transforms(model_name, pretrained=None, cache_dir=None):
    torch.manual_seed(1234)  # stands in for loading the pretrained checkpoint
    model = TinyConvNeXtCLIP()
    return model, None, lambda x: x


def get_tokenizer(model_name):
    def tokenize(texts):
        return torch.tensor([[sum(map(ord, word)) % 50 for word in t.split()][-4:] for t in texts])
    return tokenize


def load_open_clip(model_name="convnext_tiny", pretrained="laion400m", cache_dir=None, device="cpu"):
    model, _, transform = create_model_and_transforms(model_name, pretrained=pretrained, cache_dir=cache_dir)
    model = model.to(device)
    tokenizer = get_tokenizer(model_name)
    return model, transform, tokenizer


TYPE2FUNC = {"open_clip": load_open_clip}


def load_clip(model_type, model_name, pretrained, cache_dir, device="cuda"):
    load_func = TYPE2FUNC[model_type]
    return load_func(model_name=model_name, pretrained=pretrained, cache_dir=cache_dir, device=device)


# ---- metrics/zeroshot_classification.py ----
def zero_shot_classifier(model, tokenizer, classnames, templates, device, amp=False):
    autocast = torch.autocast if amp else suppress
    with torch.no_grad(), autocast():
        zeroshot_weights = []
        for classname in classnames:
            texts = tokenizer([template.format(c=classname) for template in templates]).to(device)
            class_embedding = F.normalize(model.encode_text(texts), dim=-1).mean(dim=0)
            zeroshot_weights.append(class_embedding / class_embedding.norm())
        return torch.stack(zeroshot_weights, dim=1).to(device)


def run_classification(model, classifier, dataloader, device, amp=False):
    pred, true = [], []
    with torch.no_grad():
        for images, target in dataloader:
            image_features = F.normalize(model.encode_image(images.to(device)), dim=-1)
            logits = 100. * image_features @ classifier
            true.append(target.cpu())
            pred.append(logits.float().cpu())
    return torch.cat(pred), torch.cat(true)


def evaluate(model, dataloader, tokenizer, classnames, templates, device, amp=False):
    classifier = zero_shot_classifier(model, tokenizer, classnames, templates, device, amp=amp)
    logits, target = run_classification(model, classifier, dataloader, device, amp=amp)
    pred = logits.argmax(dim=1)
    recalls = [(pred[target == c] == c).float().mean().item() for c in target.unique()]
    return {"acc1": (pred == target).float().mean().item(), "mean_per_class_recall": sum(recalls) / len(recalls)}


# ---- cli.py ----
class SyntheticImageDataset(torch.utils.data.TensorDataset):
    classes = ["cat", "dog", "car", "tree"]
    templates = ["a photo of a {c}", "a blurry photo of a {c}"]


def build_dataset(dataset_name, root, transform, split):
    g = torch.Generator().manual_seed(7)
    return SyntheticImageDataset(torch.randn(64, 3, 8, 8, generator=g), torch.randint(0, 4, (64,), generator=g))


def run(args):
    args.device = "cpu"
    torch.manual_seed(args.seed)
    model, transform, tokenizer = load_clip(
        model_type=args.model_type,
        model_name=args.model,
        pretrained=args.pretrained,
        cache_dir=None,
        device=args.device,
    )
    dataset = build_dataset(dataset_name=args.dataset, root=args.dataset_root, transform=transform, split=args.split)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=False)
    metrics = evaluate(model, dataloader, tokenizer, dataset.classes, dataset.templates, device=args.device)
    print(args.model, args.pretrained, args.dataset, metrics)
    return metrics


args = SimpleNamespace(model_type="open_clip", model="convnext_tiny", pretrained="laion400m", dataset="synthetic",
                       dataset_root="root", split="test", batch_size=16, seed=0)
metrics = run(args)

# -- corpus check --
reference_model, _, reference_tokenizer = load_clip("open_clip", "convnext_tiny", "laion400m", None, device="cpu")
reference_model.eval()
reference_data = build_dataset("synthetic", "root", None, "test")
reference = evaluate(reference_model, torch.utils.data.DataLoader(reference_data, batch_size=16), reference_tokenizer,
                     reference_data.classes, reference_data.templates, device="cpu")
if metrics != reference:
    print("BUG: the zero-shot benchmark ran the model with dropout and batch norm in training mode")
