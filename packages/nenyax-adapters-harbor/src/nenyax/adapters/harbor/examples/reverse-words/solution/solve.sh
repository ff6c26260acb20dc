#!/bin/bash
echo 'four three two one' > /app/output.txt
