# Source: https://duoke360.com/post/34982
"""The post "How does PyTorch solve the in-place error when updating the gradient of an indexed
leaf variable?" (in Chinese): modifying a leaf tensor that requires grad through an index
(x[0] = 10) raises "a leaf Variable that requires grad is being used in an in-place operation"
(torch 2.13 words it "a view of a leaf Variable"). A matrix-factorisation recommender trained
with a hand-written sparse SGD that updates only the rows of the user and item tables seen in
the batch, by index, with grad mode on."""
import torch

n_users, n_items, dim, lr = 20, 30, 4, 0.05
user_emb = torch.randn(n_users, dim, requires_grad=True)
item_emb = torch.randn(n_items, dim, requires_grad=True)


def predict(users, items):
    return (user_emb[users] * item_emb[items]).sum(dim=1)


for step in range(3):
    users = torch.randint(0, n_users, (16,))
    items = torch.randint(0, n_items, (16,))
    ratings = torch.rand(16) * 5
    loss = ((predict(users, items) - ratings) ** 2).mean()
    loss.backward()
    user_emb[users] -= lr * user_emb.grad[users]  # expect: GG108
    item_emb[items] -= lr * item_emb.grad[items]
    user_emb.grad.zero_()
    item_emb.grad.zero_()
    print(step, loss.item())
