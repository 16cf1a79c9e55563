"""Train a logistic regression on data/churn.csv and save it as JSON.

Runs in the training image, where pandas and scikit-learn are Debian
packages pinned in envbuild.yaml (apt:).  The model is written as plain
numbers (feature means and scales, coefficients, intercept), so serving
needs numpy only.
"""
import json
import os

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

FEATURES = ["tenure_months", "monthly_charges", "support_calls"]


def main():
    data = os.environ.get("DATA", "data/churn.csv")
    out = os.environ.get("MODEL_DIR", "model")
    c = 1.0 / float(os.environ.get("L2", "1.0"))
    df = pd.read_csv(data)
    x_train, x_test, y_train, y_test = train_test_split(
        df[FEATURES], df["churned"], test_size=0.25, random_state=0, stratify=df["churned"])
    scaler = StandardScaler().fit(x_train)
    clf = LogisticRegression(C=c).fit(scaler.transform(x_train), y_train)
    acc = clf.score(scaler.transform(x_test), y_test)
    model = {
        "features": FEATURES,
        "mean": [round(v, 6) for v in scaler.mean_],
        "scale": [round(v, 6) for v in scaler.scale_],
        "coef": [round(v, 6) for v in clf.coef_[0]],
        "intercept": round(float(clf.intercept_[0]), 6),
        "rows": int(len(df)),
        "test_accuracy": round(float(acc), 4),
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.json"), "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    print(f"trained on {len(x_train)} rows of {data}: test accuracy {acc:.3f}; "
          f"wrote {os.path.join(out, 'model.json')}")


if __name__ == "__main__":
    main()
