# Source: https://github.com/RUCAIBox/RecBole/issues/2027
"""RecBole with pre-trained embeddings: the user loads user and item embeddings into a dummy
model with `nn.Embedding.from_pretrained(..., freeze=True)`, so that training does not change
them, and trains it with RecBole's Trainer. Every parameter the BPR loss reaches is frozen, and
`scaler.scale(loss + sync_loss).backward()` in `Trainer._train_epoch` raises "element 0 of tensors
does not require grad and does not have a grad_fn" (with freeze=False it trains). A model whose
every input is frozen has nothing to train: the fix keeps the embeddings frozen and gives the
model something trainable on top of them. RecBole's Trainer loop, GradScaler (disabled, as on
CPU) and BPR loss follow the library, small, with random pre-trained vectors and interactions."""
import torch
import torch.nn as nn


class BPRLoss(nn.Module):
    def __init__(self, gamma=1e-10):
        super(BPRLoss, self).__init__()
        self.gamma = gamma

    def forward(self, pos_score, neg_score):
        return -torch.log(self.gamma + torch.sigmoid(pos_score - neg_score)).mean()


class DummyModel(nn.Module):
    def __init__(self, user_weights, item_weights):
        super(DummyModel, self).__init__()
        self.user_embedding = nn.Embedding.from_pretrained(user_weights, freeze=True)
        self.item_embedding = nn.Embedding.from_pretrained(item_weights, freeze=True)
        self.loss = BPRLoss()

    def forward(self, user, item):
        return self.user_embedding(user), self.item_embedding(item)

    def calculate_loss(self, interaction):
        user, pos_item, neg_item = interaction["user_id"], interaction["item_id"], interaction["neg_item_id"]
        user_e, pos_e = self.forward(user, pos_item)
        neg_e = self.item_embedding(neg_item)
        pos_score = torch.mul(user_e, pos_e).sum(dim=1)
        neg_score = torch.mul(user_e, neg_e).sum(dim=1)
        return self.loss(pos_score, neg_score)


class Trainer:
    def __init__(self, model, learning_rate=1e-3):
        self.model = model
        params = [p for p in model.parameters() if p.requires_grad] or list(model.parameters())
        self.optimizer = torch.optim.Adam(params, lr=learning_rate)
        self.scaler = torch.amp.GradScaler("cpu", enabled=False)

    def _train_epoch(self, train_data, epoch_idx):
        self.model.train()
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            self.optimizer.zero_grad()
            sync_loss = 0
            loss = self.model.calculate_loss(interaction)
            total_loss = loss.item() if total_loss is None else total_loss + loss.item()
            self.scaler.scale(loss + sync_loss).backward()  # expect: GG104
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return total_loss

    def fit(self, train_data, epochs=2):
        for epoch_idx in range(epochs):
            train_loss = self._train_epoch(train_data, epoch_idx)
            print(epoch_idx, train_loss)


torch.manual_seed(0)
n_users, n_items, dim = 20, 30, 8
model = DummyModel(torch.randn(n_users, dim), torch.randn(n_items, dim))
train_data = [{"user_id": torch.randint(0, n_users, (16,)), "item_id": torch.randint(0, n_items, (16,)),
               "neg_item_id": torch.randint(0, n_items, (16,))} for _ in range(3)]
trainer = Trainer(model)
trainer.fit(train_data)
