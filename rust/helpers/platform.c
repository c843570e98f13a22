// SPDX-License-Identifier: GPL-2.0

#include <linux/device.h>

void *rust_helper_dev_get_drvdata(const struct device *dev)
{
	return dev_get_drvdata(dev);
}

void rust_helper_dev_set_drvdata(struct device *dev, void *data)
{
	dev_set_drvdata(dev, data);
}

struct device *rust_helper_bus_find_device_by_name(const struct bus_type *bus,
						   struct device *start,
						   const char *name)
{
	return bus_find_device_by_name(bus, start, name);
}
