#!/bin/bash
mkdir -p /app/data
seq 3 > /app/data/a.txt
seq 5 > /app/data/b.txt
seq 7 > /app/data/c.txt
