package benchwrite

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fsNames names the file systems a benchmark is likely to run on, by
// statfs(2) magic number.
var fsNames = map[int64]string{
	unix.EXT4_SUPER_MAGIC:      "ext4", // also ext2 and ext3, which share the magic
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay",
	unix.F2FS_SUPER_MAGIC:      "f2fs",
	unix.NFS_SUPER_MAGIC:       "nfs",
	unix.FUSE_SUPER_MAGIC:      "fuse",
	unix.V9FS_MAGIC:            "9p",
	unix.RAMFS_MAGIC:           "ramfs",
	0x2fc12fc1:                 "zfs",
}

// statFS returns the type of the file system holding dir (a name, or the
// magic number in hex) and the bytes available to an unprivileged user.
func statFS(dir string) (fsType string, free int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", 0, fmt.Errorf("cannot statfs %q: %w", dir, err)
	}
	magic := int64(st.Type)
	name, ok := fsNames[magic]
	if !ok {
		name = fmt.Sprintf("0x%x", uint32(magic))
	}
	return name, int64(st.Bavail) * int64(st.Bsize), nil
}
