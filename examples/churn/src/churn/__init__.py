"""churn: a tiny churn model, trained and served by the envbuild example."""
