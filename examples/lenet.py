"""LeNet as in OneFlow's examples: conv 5x5 32 SAME, max-pool 2, conv 5x5 64 SAME, max-pool 2,
fully connected 1024 (with dropout while training), fully connected 10. NCHW input (N, 1, 28, 28).
Used by examples/train_fashion_mnist.py and benchmarks/cnn_benchmark.py."""
import oneflow as flow


def lenet(images, train=False):
    initializer = flow.truncated_normal(0.1)
    conv1 = flow.layers.conv2d(images, 32, 5, padding="SAME", activation=flow.nn.relu,
                               kernel_initializer=initializer, name="conv1")
    pool1 = flow.nn.max_pool2d(conv1, ksize=2, strides=2, padding="VALID", data_format="NCHW",
                               name="pool1")
    conv2 = flow.layers.conv2d(pool1, 64, 5, padding="SAME", activation=flow.nn.relu,
                               kernel_initializer=initializer, name="conv2")
    pool2 = flow.nn.max_pool2d(conv2, ksize=2, strides=2, padding="VALID", data_format="NCHW",
                               name="pool2")
    flat = flow.reshape(pool2, [pool2.shape[0], -1])
    hidden = flow.layers.dense(flat, 1024, activation=flow.nn.relu,
                               kernel_initializer=initializer, name="dense1")
    if train:
        hidden = flow.nn.dropout(hidden, rate=0.5, name="dropout")
    return flow.layers.dense(hidden, 10, kernel_initializer=initializer, name="dense2")
