# Source: https://github.com/sicara/easy-few-shot-learning/issues/40
"""Episodic training as easyfsl intends it: Finetune is "incompatible with episodic training because
we freeze the backbone to perform fine-tuning" (its docstring), so the episodic loop trains a
PrototypicalNetworks classifier, whose query scores keep their graph to the backbone; Finetune
stays for evaluation only."""
import torch
from torch import Tensor, nn


def compute_prototypes(support_features: Tensor, support_labels: Tensor) -> Tensor:
    n_way = len(torch.unique(support_labels))
    return torch.cat([support_features[torch.nonzero(support_labels == label)].mean(0)
                      for label in range(n_way)])


class FewShotClassifier(nn.Module):
    def __init__(self, backbone: nn.Module, use_softmax: bool = False):
        super().__init__()
        self.backbone = backbone
        self.use_softmax = use_softmax
        self.prototypes = torch.tensor(())
        self.support_features = torch.tensor(())
        self.support_labels = torch.tensor(())

    def process_support_set(self, support_images: Tensor, support_labels: Tensor):
        self.store_support_set_data(support_images, support_labels)

    def store_support_set_data(self, support_images: Tensor, support_labels: Tensor):
        self.support_labels = support_labels
        self.support_features = self.backbone(support_images)
        self.prototypes = compute_prototypes(self.support_features, support_labels)

    def cosine_distance_to_prototypes(self, samples) -> Tensor:
        return (nn.functional.normalize(samples, dim=1)
                @ nn.functional.normalize(self.prototypes, dim=1).T)

    def softmax_if_specified(self, output: Tensor) -> Tensor:
        return output.softmax(-1) if self.use_softmax else output


class Finetune(FewShotClassifier):
    def __init__(self, *args, fine_tuning_steps: int = 10, fine_tuning_lr: float = 1e-3, **kwargs):
        super().__init__(*args, **kwargs)
        # Since we fine-tune the prototypes we need to make them leaf variables
        # i.e. we need to freeze the backbone.
        self.backbone.requires_grad_(False)
        self.fine_tuning_steps = fine_tuning_steps
        self.fine_tuning_lr = fine_tuning_lr

    def forward(self, query_images: Tensor) -> Tensor:
        query_features = self.backbone.forward(query_images)
        with torch.enable_grad():
            self.prototypes.requires_grad_()
            optimizer = torch.optim.Adam([self.prototypes], lr=self.fine_tuning_lr)
            for _ in range(self.fine_tuning_steps):
                support_logits = self.cosine_distance_to_prototypes(self.support_features)
                loss = nn.functional.cross_entropy(support_logits, self.support_labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return self.softmax_if_specified(
            self.cosine_distance_to_prototypes(query_features)
        ).detach()


class PrototypicalNetworks(FewShotClassifier):
    def process_support_set(self, support_images: Tensor, support_labels: Tensor):
        self.support_labels = support_labels
        self.prototypes = compute_prototypes(self.backbone(support_images), support_labels)

    def forward(self, query_images: Tensor) -> Tensor:
        scores = -torch.cdist(self.backbone(query_images), self.prototypes)
        return self.softmax_if_specified(scores)


n_way, n_shot, n_query = 2, 3, 2
convolutional_network = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
few_shot_classifier = PrototypicalNetworks(convolutional_network)

LOSS_FUNCTION = nn.CrossEntropyLoss()
train_optimizer = torch.optim.SGD(few_shot_classifier.parameters(), lr=0.01, momentum=0.9)


def training_epoch(model_, data_loader, optimizer):
    all_loss = []
    model_.train()
    for episode_index, (support_images, support_labels, query_images, query_labels, _) in enumerate(data_loader):
        optimizer.zero_grad()
        model_.process_support_set(support_images, support_labels)
        classification_scores = model_(query_images)
        loss = LOSS_FUNCTION(classification_scores, query_labels)
        loss.backward()
        optimizer.step()
        all_loss.append(loss.item())
    return sum(all_loss) / len(all_loss)


train_loader = [(torch.randn(n_way * n_shot, 3, 8, 8), torch.arange(n_way).repeat_interleave(n_shot),
                 torch.randn(n_way * n_query, 3, 8, 8), torch.arange(n_way).repeat_interleave(n_query), None)
                for _ in range(2)]
print(training_epoch(few_shot_classifier, train_loader, train_optimizer))
