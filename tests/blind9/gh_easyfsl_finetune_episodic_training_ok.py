# Source: https://github.com/sicara/easy-few-shot-learning/issues/40
"""easyfsl's episodic training with the fix the library's own Finetune docstring gives ("as is,
it is incompatible with episodic training because we freeze the backbone"): the backbone is
trained episodically with PrototypicalNetworks, whose scores keep their graph, and Finetune, built
on the trained backbone, is used only in the no-grad evaluation, where it fine-tunes the
prototypes under its own torch.enable_grad()."""
from statistics import mean

import torch
from torch import Tensor, nn
from torch.optim import SGD


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

    def forward(self, query_images: Tensor) -> Tensor:
        raise NotImplementedError

    def process_support_set(self, support_images: Tensor, support_labels: Tensor):
        raise NotImplementedError

    def softmax_if_specified(self, output: Tensor) -> Tensor:
        return output.softmax(-1) if self.use_softmax else output

    def cosine_distance_to_prototypes(self, samples) -> Tensor:
        return (nn.functional.normalize(samples, dim=1)
                @ nn.functional.normalize(self.prototypes, dim=1).T)

    def store_support_set_data(self, support_images: Tensor, support_labels: Tensor):
        self.support_labels = support_labels
        self.support_features = self.backbone(support_images)
        self.prototypes = compute_prototypes(self.support_features, support_labels)


class Finetune(FewShotClassifier):
    def __init__(self, *args, fine_tuning_steps: int = 3, fine_tuning_lr: float = 1e-3, **kwargs):
        super().__init__(*args, **kwargs)
        # Since we fine-tune the prototypes we need to make them leaf variables
        # i.e. we need to freeze the backbone.
        self.backbone.requires_grad_(False)
        self.fine_tuning_steps = fine_tuning_steps
        self.fine_tuning_lr = fine_tuning_lr

    def process_support_set(self, support_images: Tensor, support_labels: Tensor):
        self.store_support_set_data(support_images, support_labels)

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
        self.store_support_set_data(support_images, support_labels)

    def forward(self, query_images: Tensor) -> Tensor:
        query_features = self.backbone.forward(query_images)
        scores = -torch.cdist(query_features, self.prototypes)
        return self.softmax_if_specified(scores)


def episodes(n_tasks, n_way=2, n_shot=3, n_query=2):
    for _ in range(n_tasks):
        support_labels = torch.arange(n_way).repeat_interleave(n_shot)
        query_labels = torch.arange(n_way).repeat_interleave(n_query)
        yield (torch.randn(n_way * n_shot, 3, 8, 8), support_labels,
               torch.randn(n_way * n_query, 3, 8, 8), query_labels, list(range(n_way)))


def sliding_average(value_list, window):
    return mean(value_list[-window:])


LOSS_FUNCTION = nn.CrossEntropyLoss()


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
        print(episode_index, sliding_average(all_loss, 10))
    return mean(all_loss)


def evaluate_on_one_task(model, support_images, support_labels, query_images, query_labels):
    model.process_support_set(support_images, support_labels)
    predictions = model(query_images).detach().data
    number_of_correct_predictions = (torch.max(predictions, 1)[1] == query_labels).sum().item()
    return number_of_correct_predictions, len(query_labels)


def evaluate(model, data_loader):
    total_predictions = 0
    correct_predictions = 0
    model.eval()
    with torch.no_grad():
        for support_images, support_labels, query_images, query_labels, class_ids in data_loader:
            correct, total = evaluate_on_one_task(model, support_images, support_labels, query_images, query_labels)
            total_predictions += total
            correct_predictions += correct
    return correct_predictions / total_predictions


if __name__ == "__main__":
    convolutional_network = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
                                          nn.Flatten(), nn.Linear(32, 16))
    few_shot_classifier = PrototypicalNetworks(convolutional_network)

    train_optimizer = SGD(few_shot_classifier.parameters(), lr=1e-2, momentum=0.9, weight_decay=5e-4)
    for epoch in range(1):
        average_loss = training_epoch(few_shot_classifier, episodes(3), train_optimizer)
        print(f"Epoch {epoch} average loss {average_loss}")
    print("Finetune accuracy:", evaluate(Finetune(convolutional_network), episodes(2)))
