# The app for a team on a shared machine:
#     docker build -t specviz .
#     docker run -d --init -p 8501:8501 -v specviz-data:/data specviz
# (--init: a small init as process 1 reaps the processes a killed SQL query server leaves behind.)
# Imported runs live in the volume at /data; a bind-mounted folder must be writable by uid 10001.
# specviz has no login: put the port behind your own authentication (or set SPECVIZ_VIEWER=true).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The pinned set make run installs, in a layer of its own: a change to the code does not reinstall it.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY app.py ./
COPY .streamlit/config.toml .streamlit/
COPY pages/ pages/
COPY specviz/ specviz/
COPY data/ data/

RUN useradd --create-home --uid 10001 specviz \
    && mkdir /data \
    && chown specviz /data
# A named volume starts as a copy of /data, so it is the user's to write too.
VOLUME /data

ENV SPECVIZ_DB=/data/specviz.duckdb \
    SPECVIZ_HOST=0.0.0.0 \
    SPECVIZ_PORT=8501

USER specviz
EXPOSE 8501

# Loopback reaches the app when it listens on 0.0.0.0 (SPECVIZ_HOST); the port follows SPECVIZ_PORT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; from specviz import settings; url = f'http://127.0.0.1:{settings.get(\"SPECVIZ_PORT\")}/_stcore/health'; sys.exit(urllib.request.urlopen(url, timeout=4).read() != b'ok')"]

# make run's command line (specviz app), which execs Streamlit: it is process 1, and `docker stop`
# reaches it directly.
CMD ["python", "-m", "specviz", "app"]
