# Source: https://github.com/Unispac/Visual-Adversarial-Examples-Jailbreak-Large-Language-Models/issues/9
"""The visual adversarial-example attack (llava_llama_2_utils/visual_attacker.py, Attacker.
attack_unconstrained) run against LLaVA-v1.5, as the reporter tried: the whole model is frozen and
only the image noise is optimised, through the loss of the target sentences given the
adversarial image. LLaVA's CLIPVisionTower.forward is decorated with @torch.no_grad() (LLaVA's
issue 305: "this torch.no_grad is preventing you from doing input optimization"), so the image
features carry no graph, nothing in the loss requires grad, and target_loss.backward() raises
"element 0 of tensors does not require grad and does not have a grad_fn". The vision tower,
projector and language model are small stand-ins with LLaVA's structure; the prompt, targets and
image are random token ids and pixels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def normalize(images):
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073]).view(1, 3, 1, 1)
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711]).view(1, 3, 1, 1)
    return (images - mean) / std


class CLIPVisionTower(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.vision_tower = nn.Sequential(nn.Conv2d(3, hidden, 8, stride=8), nn.GELU())

    @torch.no_grad()
    def forward(self, images):
        image_features = self.vision_tower(images)
        return image_features.flatten(2).transpose(1, 2)  # (batch, patches, hidden)


class LlavaLlamaForCausalLM(nn.Module):
    def __init__(self, vocab=50, hidden=16):
        super().__init__()
        self.vision_tower = CLIPVisionTower(hidden)
        self.mm_projector = nn.Linear(hidden, hidden)
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab)

    def encode_images(self, images):
        return self.mm_projector(self.vision_tower(images))

    def forward(self, input_ids, images, labels):
        image_embeds = self.encode_images(images)
        inputs_embeds = torch.cat([image_embeds, self.embed_tokens(input_ids)], dim=1)
        hidden, _ = self.layers(inputs_embeds)
        logits = self.lm_head(hidden[:, image_embeds.size(1):])
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1),
                               ignore_index=-100)
        return loss


class Attacker:
    def __init__(self, model, targets, device='cpu'):
        self.model = model
        self.targets = targets
        self.device = device
        self.model.eval()
        self.model.requires_grad_(False)

    def attack_loss(self, prompt_ids, images, target_ids):
        input_ids = torch.cat([prompt_ids.expand(target_ids.size(0), -1), target_ids], dim=1)
        labels = input_ids.clone()
        labels[:, :prompt_ids.size(1)] = -100
        return self.model(input_ids, images.expand(target_ids.size(0), -1, -1, -1), labels)

    def attack_unconstrained(self, prompt_ids, img, batch_size=2, num_iter=3, alpha=1 / 255):
        adv_noise = torch.rand_like(img)
        adv_noise.requires_grad_(True)
        adv_noise.retain_grad()

        for t in range(num_iter + 1):
            batch_targets = self.targets[torch.randint(0, self.targets.size(0), (batch_size,))]
            x_adv = normalize(adv_noise)

            target_loss = self.attack_loss(prompt_ids, x_adv, batch_targets)
            target_loss.backward()  # expect: GG104

            adv_noise.data = (adv_noise.data - alpha * adv_noise.grad.detach().sign()).clamp(0, 1)
            adv_noise.grad.zero_()
            self.model.zero_grad()
            print('######### Output - Iter = %d ##########' % t, target_loss.item())

        return normalize(adv_noise).detach()


torch.manual_seed(0)
model = LlavaLlamaForCausalLM()
targets = torch.randint(0, 50, (4, 6))  # the harmful target sentences, tokenised
attacker = Attacker(model, targets)
prompt_ids = torch.randint(0, 50, (1, 5))
img = torch.rand(1, 3, 32, 32)
adv_img = attacker.attack_unconstrained(prompt_ids, img, batch_size=2, num_iter=3)
print(adv_img.shape)
