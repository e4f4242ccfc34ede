# The viewers' plugins, included by the Makefile (docs/viewers.md):
#
#   plugins/gdk-pixbuf/   a gdk-pixbuf loader, libpixbufloader-mmp.so, that uses
#                         libmmpdec alone (through mmp/mmp.h), and a thumbnailer
#                         entry for gdk-pixbuf-thumbnailer; built where pkg-config
#                         finds gdk-pixbuf-2.0 (libgdk-pixbuf-2.0-dev), or with
#                         GDK_PIXBUF=1 (GDK_PIXBUF=0 leaves it out)
#   plugins/imagemagick/  ImageMagick's delegates (mmp-dec reads, mmp-enc writes)
#                         and magic: data, nothing to build
#
# make install runs install-plugins after the library is in place:
#   - the loader into GDK_PIXBUF_MODULEDIR, by default PREFIX's own loaders
#     folder ($(LIBDIR)/gdk-pixbuf-2.0/VERSION/loaders), linked with LIBDIR
#     as its run path (relinked on every install: LIBDIR changes from one to
#     the next); then, without DESTDIR, registered: where that folder is
#     gdk-pixbuf's own (pkg-config's gdk_pixbuf_moduledir) in gdk-pixbuf's
#     cache (gdk-pixbuf-query-loaders --update-cache); elsewhere in a cache
#     of its own beside the folder, loaders.cache, which lists the system's
#     loaders and this one, for GDK_PIXBUF_MODULE_FILE. With DESTDIR nothing
#     is registered: a package's trigger runs gdk-pixbuf-query-loaders.
#   - the thumbnailer entry into PREFIX/share/thumbnailers/ (with the loader);
#   - delegates.xml (naming PREFIX/bin's programs) and magic.xml into
#     PREFIX/share/mmp/imagemagick/, for MAGICK_CONFIGURE_PATH;
#   - without DESTDIR, update-mime-database PREFIX/share/mime: gdk-pixbuf
#     asks GIO for a file's type, and GIO knows image/x-mmp only from the
#     database (XDG_DATA_DIRS names PREFIX/share; /usr/local/share is there
#     by default).
# check-viewers installs into $(VIEWSTAGE)/prefix and runs
# tests/viewers/gdk-pixbuf.sh and tests/viewers/imagemagick.sh against it.

GDK_PIXBUF ?= $(shell pkg-config --exists gdk-pixbuf-2.0 2>/dev/null && echo 1 || echo 0)
PIXBUF_PC = pkg-config --variable=$(1) gdk-pixbuf-2.0 2>/dev/null
GDK_PIXBUF_MODULEDIR ?= $(LIBDIR)/gdk-pixbuf-2.0/$(shell $(call PIXBUF_PC,gdk_pixbuf_binary_version))/loaders
PIXBUF_SYSTEM_DIR = $(shell $(call PIXBUF_PC,gdk_pixbuf_moduledir))
PIXBUF_QUERY      = $(shell $(call PIXBUF_PC,gdk_pixbuf_query_loaders))
PIXBUF_LOADER = $(BUILD)/plugins/libpixbufloader-mmp.so
PIXBUF_OBJ    = $(BUILD)/pic/plugins/gdk-pixbuf/io-mmp.o
IM_DIR        = $(PREFIX)/share/mmp/imagemagick
VIEWSTAGE     = $(BUILD)/viewstage
UPDATE_MIME   = if [ -d $(PREFIX)/share/mime ] && command -v update-mime-database >/dev/null; then \
                    update-mime-database $(PREFIX)/share/mime; fi

$(PIXBUF_OBJ): MMP_CFLAGS := $(DEC_CFLAGS) $(shell pkg-config --cflags gdk-pixbuf-2.0 2>/dev/null)
-include $(PIXBUF_OBJ:.o=.d)

# Relinked on every install (its run path is LIBDIR); -z defs: it needs
# nothing but libmmpdec and gdk-pixbuf's own libraries.
.PHONY: $(PIXBUF_LOADER) plugins install-plugins uninstall-plugins check-viewers
$(PIXBUF_LOADER): $(PIXBUF_OBJ) $(DEC_SHLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -Wl,-z,defs -Wl,-rpath,$(LIBDIR) -o $@ $(PIXBUF_OBJ) $(DEC_SHLIB) \
	    $(LDFLAGS) $$(pkg-config --libs gdk-pixbuf-2.0)

plugins: $(if $(filter 1,$(GDK_PIXBUF)),$(PIXBUF_LOADER))

install-plugins: plugins
	install -d $(DESTDIR)$(IM_DIR)
	sed 's#@BINDIR@#$(PREFIX)/bin#g' plugins/imagemagick/delegates.xml.in > $(DESTDIR)$(IM_DIR)/delegates.xml
	install -m 644 plugins/imagemagick/magic.xml $(DESTDIR)$(IM_DIR)/magic.xml
ifeq ($(GDK_PIXBUF),1)
	install -d $(DESTDIR)$(GDK_PIXBUF_MODULEDIR) $(DESTDIR)$(PREFIX)/share/thumbnailers
	install -m 755 $(PIXBUF_LOADER) $(DESTDIR)$(GDK_PIXBUF_MODULEDIR)/
	install -m 644 plugins/gdk-pixbuf/mmp.thumbnailer $(DESTDIR)$(PREFIX)/share/thumbnailers/
	@$(MAKE) --no-print-directory register-plugins
endif
	$(if $(DESTDIR),,$(UPDATE_MIME))

uninstall-plugins:
	rm -f $(DESTDIR)$(IM_DIR)/delegates.xml $(DESTDIR)$(IM_DIR)/magic.xml \
	    $(DESTDIR)$(GDK_PIXBUF_MODULEDIR)/libpixbufloader-mmp.so \
	    $(DESTDIR)$(PREFIX)/share/thumbnailers/mmp.thumbnailer
	rmdir $(DESTDIR)$(IM_DIR) 2>/dev/null || true
	@$(MAKE) --no-print-directory register-plugins
	$(if $(DESTDIR),,$(UPDATE_MIME))

# The cache that lists the loader (or no longer does, after uninstall).
.PHONY: register-plugins
register-plugins:
ifeq ($(DESTDIR),)
ifeq ($(GDK_PIXBUF_MODULEDIR),$(PIXBUF_SYSTEM_DIR))
	$(PIXBUF_QUERY) --update-cache
else
	@cache=$(dir $(GDK_PIXBUF_MODULEDIR:/=))loaders.cache; \
	if [ -f $(GDK_PIXBUF_MODULEDIR)/libpixbufloader-mmp.so ]; then \
	    echo "$(PIXBUF_QUERY) ... > $$cache"; \
	    $(PIXBUF_QUERY) $(PIXBUF_SYSTEM_DIR)/*.so $(GDK_PIXBUF_MODULEDIR)/libpixbufloader-mmp.so > $$cache; \
	else rm -f $$cache; fi
endif
endif

check-viewers: all
	@sh scripts/install-deps.sh --if-missing --viewers
	@rm -rf $(VIEWSTAGE)
	@XDG_DATA_DIRS=$(abspath $(VIEWSTAGE))/prefix/share:/usr/share \
	    $(MAKE) --no-print-directory install PREFIX=$(abspath $(VIEWSTAGE))/prefix GDK_PIXBUF=1 >/dev/null
	@CC="$(CC)" CFLAGS="$(CFLAGS)" sh tests/viewers/gdk-pixbuf.sh $(abspath $(VIEWSTAGE))
	@sh tests/viewers/imagemagick.sh $(abspath $(VIEWSTAGE))
	@XDG_DATA_DIRS=$(abspath $(VIEWSTAGE))/prefix/share:/usr/share \
	    $(MAKE) --no-print-directory uninstall PREFIX=$(abspath $(VIEWSTAGE))/prefix GDK_PIXBUF=1 >/dev/null
	@left=$$(find $(VIEWSTAGE)/prefix -type f -o -type l | grep -v '/share/mime/' || true); \
	[ -z "$$left" ] || { echo "check-viewers: uninstall left $$left"; exit 1; }
	@rm -rf $(VIEWSTAGE)
	@echo "check-viewers: installed, gdk-pixbuf and ImageMagick opened and wrote mmp files, uninstalled"
