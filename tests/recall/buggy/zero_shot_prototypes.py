"""Zero-shot style classifier: class prototypes come from a trainable text encoder applied to the
class-name embeddings once, before fine-tuning; every step scores images against them."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class_names = ["cat", "dog", "bird"]
vocab = {name: i for i, name in enumerate(class_names)}
name_emb = nn.Embedding(len(vocab), 6)
text_encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh())
image_encoder = nn.Sequential(nn.Linear(10, 8), nn.Tanh())

with torch.no_grad():
    name_vectors = name_emb(torch.tensor([vocab[n] for n in class_names]))
prototypes = F.normalize(text_encoder(name_vectors), dim=-1)

opt = torch.optim.Adam([*text_encoder.parameters(), *image_encoder.parameters()], lr=1e-3)
for step in range(3):
    images, labels = torch.randn(6, 10), torch.randint(0, 3, (6,))
    logits = F.normalize(image_encoder(images), dim=-1) @ prototypes.t() * 10
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
