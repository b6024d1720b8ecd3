"""The talk's vmap example: every rotation/flip augmentation of every image, by nesting vmap.

`augment` rotates an image by `k` quarter turns and flips it left-right when `flip` is 1.
vmap over (k, flip) pairs with in_axes=(None, 0, 0) gives the 8 augmentations of one image;
vmap again over a stack of images gives all of them for every image.  np.rot90 with a
per-example `k` has no batching rule (the output's layout depends on k), so the generated code
loops over the examples there, and says so in a comment.
"""

import numpy as np

import transpile as tp


def augment(image, k, flip):
    rotated = np.rot90(image, k)
    if flip:
        rotated = np.fliplr(rotated)
    return rotated


ROTATIONS = np.array([0, 1, 2, 3, 0, 1, 2, 3])
FLIPS = np.array([0, 0, 0, 0, 1, 1, 1, 1])

all_combos_augment = tp.vmap(augment, in_axes=(None, 0, 0))
batch_all_combos = tp.vmap(all_combos_augment, in_axes=(0, None, None))
# the other nesting order: the inner vmap maps over images, the outer over (k, flip) pairs
combos_of_batches = tp.vmap(tp.vmap(augment, in_axes=(0, None, None)), in_axes=(None, 0, 0))


def main():
    image = np.arange(9.0).reshape(3, 3)
    combos = all_combos_augment(image, ROTATIONS, FLIPS)
    print("8 augmentations of one image:", combos.shape)
    for k, flip, out in zip(ROTATIONS, FLIPS, combos):
        print(f"k={k} flip={flip}: {out.astype(int).tolist()}")
    images = np.arange(10 * 9.0).reshape(10, 3, 3)
    per_image = batch_all_combos(images, ROTATIONS, FLIPS)
    per_combo = combos_of_batches(images, ROTATIONS, FLIPS)
    print("all augmentations of 10 images:", per_image.shape, "and, nested the other way,", per_combo.shape)
    print("both orders agree:", bool(np.array_equal(per_image, per_combo.transpose(1, 0, 2, 3))))


if __name__ == "__main__":
    main()
